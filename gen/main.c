/*
 * main.c -- the kgen command: dispatch to subcommands, --help, --version.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command;

static const command commands[] = {
    {"emit", kgc_cmd_emit,
     "kgen [emit] [OPTIONS] [-o FILE]\n"
     "  Writes one self-contained .cu file (standard output without -o).\n"
     "  -o, --output FILE   write FILE atomically; on any error it is left as it was\n"},
    {"params", kgc_cmd_params,
     "kgen params [--template NAME]\n"
     "  Lists the template's parameters: default, allowed values, meaning.\n"},
};

static const char common_usage[] =
    "Configuration options (emit, compile, run, explain, tune):\n"
    "  --tile T              bm=bn=bk=T and, unless given, tm=tn=1 (the seeds' T x T kernel)\n"
    "  --bm --bn --bk --tm --tn --pad --vec --bounds --layout VALUE\n"
    "                        one parameter of the template (see 'kgen params')\n"
    "  --config \"k=v ...\"    parameters as configuration text\n"
    "  --template NAME       template to use (default matmul)\n"
    "  --template-dir DIR    search DIR for templates first (also KGEN_TEMPLATE_PATH)\n"
    "  --arch sm_XY          target architecture for limits and compilation\n"
    "A parameter may be set once; contradictions are errors.\n";

static void usage(FILE *f)
{
    fprintf(f, "kgen %s -- generates, compiles, runs and tunes tiled CUDA matrix multiplications\n\n",
            KG_VERSION);
    fprintf(f, "Usage: kgen COMMAND [OPTIONS]     ('kgen help COMMAND' for one command)\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        const char *u = commands[i].usage;
        const char *nl = strchr(u, '\n');
        fprintf(f, "  %.*s\n", (int)(nl ? nl - u : (long)strlen(u)), u);
    }
    fprintf(f, "\n%s\nExit status: 0 success, 2 usage error or invalid configuration, 1 other failure.\n",
            common_usage);
}

static const command *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return KGC_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("kgen %s\n", KG_VERSION);
        return KGC_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "help") == 0) {
        if (argc == 2) {
            usage(stdout);
            return KGC_OK;
        }
        const command *c = find(argv[2]);
        if (!c) {
            fprintf(stderr, "kgen: unknown command '%s'\n", argv[2]);
            return KGC_USAGE;
        }
        printf("%s\n%s", c->usage, common_usage);
        return KGC_OK;
    }
    /* No command, or an option first: emit. */
    const command *c = find("emit");
    int shift = 0;
    if (argc >= 2 && argv[1][0] != '-') {
        if (!(c = find(argv[1]))) {
            fprintf(stderr, "kgen: unknown command '%s' (see 'kgen --help')\n", argv[1]);
            return KGC_USAGE;
        }
        shift = 1;
    }
    for (int i = 1 + shift; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s\n%s", c->usage, common_usage);
            return KGC_OK;
        }
    }
    /* The subcommand sees its own name as argv[0]. */
    char *name = (char *)c->name;
    char **sub = argv + shift;
    char *saved = sub[0];
    sub[0] = name;
    int rc = c->run(argc - shift, sub);
    sub[0] = saved;
    return rc;
}
