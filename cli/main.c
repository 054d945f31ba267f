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
    {"compile", kgc_cmd_compile,
     "kgen compile [OPTIONS] [--arch sm_XY] [-o FILE.cubin]\n"
     "  Compiles one configuration to CUBIN with NVRTC (no GPU needed) and prints its\n"
     "  registers, spills, shared memory, cubin size and compile time.\n"
     "  Without --arch: the first GPU's architecture, or sm_90 where there is none.\n"
     "  -o, --output FILE   write the CUBIN to FILE atomically\n"},
    {"device", kgc_cmd_device,
     "kgen device [--arch sm_XY]\n"
     "  Prints every GPU's limits (shared memory, registers, threads, L2, clocks) and\n"
     "  derived peaks; with --arch, the offline limits kgen uses for that architecture.\n"},
    {"run", kgc_cmd_run,
     "kgen run --m M --n N --k K [OPTIONS]\n"
     "  Runs one configuration on random data, checks it against a float64 CPU\n"
     "  reference and times it (CUDA events, warm-up, median, L2 flushed).\n"
     "  --m, --n, --k N     the shape: C is M x N, the inner dimension K\n"
     "  --layout nn|nt|tn|tt  the operands' storage (a template parameter)\n"
     "  --alpha A --beta B  C = alpha*op(A)*op(B) + beta*C (default 1 and 0)\n"
     "  --seed S            random inputs from seed S (default 1)\n"
     "  --device D          the GPU's ordinal (default 0)\n"
     "  --reps R            time exactly R runs (default: 10 to 1000, until stable)\n"
     "  Exit status 1 when the result disagrees with the reference.\n"},
    {"explain", kgc_cmd_explain, kgc_explain_usage},
    {"tune", kgc_cmd_tune,
     "kgen tune --m M --n N --k K [OPTIONS]   (or --shapes FILE; --dry-run --arch sm_XY needs no GPU)\n"
     "  Finds the fastest correct configuration for this GPU and shape and records every\n"
     "  evaluated one in the tuning database, where kg_matmul finds the best. Resumes: a\n"
     "  finished configuration is not evaluated again (--force re-times).\n"
     "  --template NAME      a template to tune (repeatable; `all`: every one with a space;\n"
     "                       default: every embedded template that declares a space)\n"
     "  --space \"p=v1,v2 ..\" replace the listed parameters' value lists (--bm 64: fix one)\n"
     "  --configs FILE       evaluate exactly the configurations listed, one a line\n"
     "                       `TEMPLATE k=v ..` (no walk; strategy exhaustive unless given)\n"
     "  --layout nn|nt|tn|tt the operands' storage (default nn)\n"
     "  --shapes FILE        lines `M N K` or `tag M N K` ('#' comments)\n"
     "  --strategy S         auto (default: 3/4 of the budget on the model's best, one per\n"
     "                       prediction, then a local search around the fastest),\n"
     "                       exhaustive, random, anneal, model\n"
     "  --budget N           evaluations per shape (default: auto 64, exhaustive all,\n"
     "                       else 10%, >= 20)\n"
     "  --time S             bound the whole run to S seconds (Ctrl-C, SIGTERM: stop now)\n"
     "  --seed S             seed for random and anneal (default 1)\n"
     "  --db FILE            database (default $KGEN_DB, $XDG_DATA_HOME/kgen/tune.db,\n"
     "                       ~/.local/share/kgen/tune.db; the last two's folders are made)\n"
     "  --jobs J             compile threads (default: one per core)\n"
     "  --device D | --devices all|D1,D2,..  GPUs to time on, one worker process each\n"
     "  --shard I/N          only slice I of N of the space (merge slices with kgen db merge)\n"
     "  --force              evaluate again what the database already has\n"
     "  --dry-run            no GPU: enumerate, check, compile, prune; print what would be timed\n"
     "                       (without a shape: 4096 x 4096 x 4096)\n"
     "  --alpha A --beta B   the GEMM's scalars while timing (default 1, 0)\n"
     "  --max-seconds S      timing cap per candidate (default 0.25)\n"
     "  --timeout S          watchdog per candidate before its first launch ends (default 60)\n"
     "  --slow-factor F      a first launch F x slower than the best is not timed in full (3; 0 off)\n"
     "  --max-spill B        spill bytes allowed (default 0); --min-occupancy X (default 0.0625)\n"
     "  --no-flush           do not flush the L2 between the search's timed runs\n"
     "  --back-to-back       the search times each candidate as a GEMM called in a loop runs:\n"
     "                       samples of launches queued back to back, L2 warm (as the final\n"
     "                       stage and kgen-bench time), not one launch at a time\n"
     "  --final N            final stage: after the search, time the N fastest configurations\n"
     "                       in the database for the shape again, back to back (L2 warm, as a\n"
     "                       GEMM in a loop runs), in rotating rounds; kg_matmul takes the\n"
     "                       fastest of them (default 8; 0: off: an earlier final stage's choice\n"
     "                       stands until a new ok row comes for the shape, then the search's)\n"
     "  --final-rounds R     samples per finalist, each about 2 ms of launches (default 10)\n"
     "  --top N              rows of the search's table (default 10, dry run 20; 0: all)\n"
     "  --csv | --json       the search's table (with the final times) on standard output\n"},
    {"choice", kgc_cmd_choice,
     "kgen choice --m M --n N --k K | --shapes FILE [--layout nn|nt|tn|tt|all] [--arch sm_XY]\n"
     "             [--brief]\n"
     "  Which configuration kg_matmul runs for each shape and layout (default nn), and why:\n"
     "  a tuned entry, the catalogue's kernel and its prediction, or the model-only choice\n"
     "  (kg_matmul_explain; minimal leading dimensions, 16-byte aligned pointers). Runs\n"
     "  nothing. Without --arch: GPU 0 (its SM count, its tuned entries), else kgen's table\n"
     "  for sm_90, said so; with --arch no device, so no tuned entry (they are per device).\n"
     "  KGEN_CATALOGUE and KGEN_DB are read as kg_matmul reads them. One line per\n"
     "  choice, `[TAG] LAYOUT MxNxK TEMPLATE CONFIG`, then the reason indented (--brief:\n"
     "  not), so that two catalogues' choices compare with diff. With M = 1 in tn or tt,\n"
     "  or N = 1 in nn or tn, the vector is one row and CONFIG's layout is the one that\n"
     "  reads it so (\"tn read as nn\").\n"},
    {"precompile", kgc_cmd_precompile,
     "kgen precompile [--arch sm_XY] [--jobs J] [--catalogue FILE]\n"
     "  Compiles every kernel of the catalogue for this GPU's architecture, in every layout\n"
     "  the catalogue has times for, into the disk cache ($KGEN_CACHE_DIR, else\n"
     "  $XDG_CACHE_HOME/kgen), so that kg_matmul's first calls need no NVRTC. Prints how\n"
     "  many were compiled, already cached and failed; exit status 1 if any failed.\n"
     "  --arch sm_XY         compile for this architecture (no GPU needed)\n"
     "  --jobs J             compile threads (default: one per core)\n"
     "  --catalogue FILE     this catalogue instead of the one for the architecture\n"
     "                       ($KGEN_CATALOGUE, else the one built into libkgen)\n"},
    {"db", kgc_cmd_db,
     "kgen db list|show|export|import|merge [--db FILE] ...\n"
     "  list                 every tuned device, layout and shape with its best configuration\n"
     "  show [FILTERS] [--top N]   rows, fastest correct first, with reasons for the rest\n"
     "  export [FILTERS] [-o FILE] [--format csv|json]   all columns (format from .json/.csv)\n"
     "  import FILE...       rows from an export; a key already present keeps the newer row;\n"
     "                       each configuration must parse for its template, and one that\n"
     "                       ran must be written as kgen writes it (canonical), in its\n"
     "                       row's layout; otherwise nothing is written\n"
     "  merge DB...          other databases (e.g. the shards of a sweep) into --db\n"
     "  FILTERS: --device NAME --template T --layout L --outcome O --m M --n N --k K\n"
     "  Before the first tune or import there is no database: list and show say so\n"
     "  (exit status 0), export fails (1). A failed import or merge changes nothing\n"
     "  and creates no file or folder.\n"},
    {"catalogue", kgc_cmd_catalogue,
     "kgen catalogue candidates|make|kernels|twins ...   (building a catalogue: catalogue/README.md)\n"
     "  candidates --shapes FILE [--arch sm_XY] [--template T] [--per-shape N] [--max N]\n"
     "      [--per-kind N] [--whole-below N] [-o FILE]\n"
     "      the configurations worth timing for these shapes: per layout, the model's top N\n"
     "      (32) of every template's space (or T's) at each shape, thinned greedily to at most\n"
     "      --max (32) that come closest to the model's best everywhere, and the best\n"
     "      --per-kind (2) of each kind (16-byte copies or not, packed operands, split-K,\n"
     "      persistent grid) chosen the same way; a template with at most --whole-below (64)\n"
     "      candidates in a layout is taken whole. Writes a --configs list.\n"
     "  make EXPORT... --date YYYY-MM-DD [--driver TEXT] [--device NAME] [--max-kernels N]\n"
     "       [--tolerance F] [--max-regret R] [--kernels CATALOGUE [--add CONFIGS\n"
     "       [--add-best K]] | --start CATALOGUE] [--measured CATALOGUE] [--max-compile S|kept]\n"
     "       [--command TEXT] [-o FILE]\n"
     "      from a `kgen db export` of `kgen tune --configs` runs over training shapes (more\n"
     "      than one, at most 8: passes timed in separate processes, each kernel's time at a\n"
     "      shape the median of the passes that timed it there): the\n"
     "      kernels (at most N, 40) whose choice by kg_matmul's model, each (layout, shape)\n"
     "      left out of its own prediction, comes closest to the best measured time there,\n"
     "      stopping once all are within F (0.02) of it; no kernel is added that would make\n"
     "      a choice more than R (2.0) times slower than the best; then kernels of the set\n"
     "      are swapped for others while that lowers the regret. Writes the catalogue file\n"
     "      (catalogue/README.md) with every time measured for them. --kernels keeps exactly\n"
     "      CATALOGUE's kernels, in its order (a catalogue measured again: after a template\n"
     "      change, or on another GPU of its architecture); --add appends the kernels of a\n"
     "      --configs list (each measured in an EXPORT; a line is matched in its template's\n"
     "      canonical form, its parameters in any order) to them; with --add-best, at most\n"
     "      K of them, each the one that most lowers the regret given the kept and those added\n"
     "      before it, while one does and until all pairs are within F (F and R rule them as\n"
     "      above), written in the list's order; the report gives the order taken. --start (a\n"
     "      rebuild) also swaps from CATALOGUE's kernels, all measured in EXPORT, and keeps\n"
     "      them where they then score better than the choice from scratch; a pair they leave\n"
     "      more than R times slower is not made worse, and may stay so. N is at least their\n"
     "      count unless given.\n"
     "      --measured takes CATALOGUE's times (its kernels and pairs too) wherever no EXPORT\n"
     "      timed that kernel at that pair, and its blocks per SM for the kernels it holds:\n"
     "      a committed catalogue extended by new measurements without the database it was\n"
     "      made from; with no EXPORT, its times alone (and its device and driver).\n"
     "      --max-compile then fits the set to S seconds of NVRTC: each kernel is compiled in\n"
     "      every layout it has times in (a thread per core, no cache: what `kgen precompile`\n"
     "      pays, here), and while the set's sum is above S, the kernel whose removal raises the\n"
     "      regret least per second goes (none that leaves a pair more than R times slower\n"
     "      than its best; the last, of those that bring the sum within S, the one that\n"
     "      raises it least); the report and the header say which. `kept` (with --kernels):\n"
     "      S is what CATALOGUE's own kernels take, compiled in the same run, so that kernels\n"
     "      added take the places of those that help least, whatever this machine's speed.\n"
     "  kernels CATALOGUE [--layout L] [-o FILE]\n"
     "      the catalogue's kernels as a --configs list, in its order; with --layout, only\n"
     "      those kg_matmul runs in layout L (those with times there), each with layout=L.\n"
     "  twins CATALOGUE [--margin F] [--min-pairs N] [--max-distance D] [--per-hole P]\n"
     "         [-o FILE]\n"
     "      the catalogue's layout holes: training pairs where a kernel has no time, though\n"
     "      its time at the same shape in another layout is at most 1/F (F 1.10) of the\n"
     "      catalogue's fastest in this layout; why it has none (check(), its vector copies'\n"
     "      needs, a spill); and for each hole of at least N (1) pairs a twin: the same\n"
     "      template and work (tile, K slices, grid, threads), at most D (2) parameters\n"
     "      changed over the values of the template's space and its groups, that passes\n"
     "      check(), runs every hole pair and compiles unpruned in that layout, the model's\n"
     "      fastest of the nearest, not one the catalogue holds (with P, 1 to 4, the fastest\n"
     "      of each other kind at that distance too: 16-byte copies or not, packed operands).\n"
     "      None where the catalogue holds such a twin measured at every hole pair, or where\n"
     "      the kernel runs at them all and was only not timed (time it). Writes the twins as a\n"
     "      --configs list (no layout: KGEN_CATALOGUE_ADD of scripts/build-catalogue.sh\n"
     "      times them in every layout), the report on standard error. Runs no GPU.\n"},
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
        if (strcmp(argv[2], "help") == 0) {
            usage(stdout);
            return KGC_OK;
        }
        const command *c = find(argv[2]);
        if (!c) {
            fprintf(stderr, "kgen: unknown command '%s' (see 'kgen --help')\n", argv[2]);
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
