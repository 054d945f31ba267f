/*
 * plot.c -- kgen-bench-plot: kgen/cuBLAS per shape and layout as an SVG
 * bar chart, from kgen-bench's CSV files. Needs no GPU.
 *
 *   kgen-bench-plot -o OUT.svg [--title TEXT] CSV...
 *
 * x: the shapes, in the order they first appear; one bar per layout (nn,
 * nt, tn, tt: a colour each); y: the ratio kgen speed / cuBLAS speed, with
 * a dashed line at 1.0 (above it kgen is faster). The legend gives each
 * layout's geometric mean. Columns are found by name in each file's header
 * (tag, layout, ratio; ok, M, N, K, lda, ldb, ldc, template and config where
 * present): a wrong result (ok = 0) is drawn as an empty red bar. Where the
 * files hold several kernels for one shape and layout (kgen-bench
 * --configs: rows that differ in template or config), the best ratio is
 * drawn. A bar stands for one shape, so a tag that names two shapes (rows
 * that differ in M, N, K or a leading dimension) and one kernel measured
 * twice are refused, naming both rows, rather than one of them dropped.
 * The SVG is written as kgen writes its files (common/write_file.c).
 *
 * Exit status: 0 written; 1 the output could not be written; 2 bad input
 * (usage, an -o path that cannot be written, an unreadable file, a missing
 * column, a ratio that is not a positive number, a tag for two shapes, a
 * repeated row), no output written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "write_file.h"

#define MAX_SHAPES 512
#define MAX_FIELDS 64

static const char *const layouts[4] = {"nn", "nt", "tn", "tt"};
static const char *const colours[4] = {"#4c72b0", "#dd8452", "#55a868", "#c44e52"};

/* A row already read for a shape and layout: where it is, and the kernel
 * it measured (template and config). */
typedef struct seen_row {
    char *kernel;
    const char *path;
    int line;
} seen_row;

typedef struct cell {
    double ratio; /* 0: not measured */
    int ok;
    char *shape;        /* M N K lda ldb ldc of its rows (the columns present) */
    seen_row *rows;
    int nrows, cap;
} cell;

typedef struct chart {
    char tags[MAX_SHAPES][32];
    cell cells[MAX_SHAPES][4];
    int nshapes;
} chart;

/* Splits a CSV line at commas (kgen-bench writes no quoted fields). */
static int split(char *line, char **field, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line;; p++) {
        if (n == max)
            return -1;
        field[n++] = p;
        p = strchr(p, ',');
        if (!p)
            return n;
        *p = '\0';
    }
}

static int column(char **field, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(field[i], name) == 0)
            return i;
    return -1;
}

static int shape_index(chart *c, const char *tag)
{
    for (int i = 0; i < c->nshapes; i++)
        if (strcmp(c->tags[i], tag) == 0)
            return i;
    if (c->nshapes == MAX_SHAPES)
        return -1;
    snprintf(c->tags[c->nshapes], sizeof c->tags[0], "%s", tag);
    return c->nshapes++;
}

/* The fields at the columns `col` that are present (index >= 0), joined by
 * spaces into a malloc'd string; NULL when out of memory. */
static char *join(char **field, const int *col, int ncol)
{
    size_t len = 1;
    for (int i = 0; i < ncol; i++)
        len += col[i] >= 0 ? strlen(field[col[i]]) + 1 : 0;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    *p = '\0';
    for (int i = 0; i < ncol; i++)
        if (col[i] >= 0)
            p += sprintf(p, "%s%s", p == s ? "" : " ", field[col[i]]);
    return s;
}

/* Records a row for shape s in layout l. A bar stands for one shape and
 * shows the best of the kernels measured on it: a row of another shape
 * under the same tag, or the same kernel again, would leave one of two
 * measurements out of the chart unseen, so both are refused, naming the
 * rows. Returns 0 or -1 after printing why. */
static int add_row(cell *cl, const char *tag, const char *layout, char *shape, char *kernel, const char *path,
                   int line)
{
    if (cl->nrows > 0 && strcmp(cl->shape, shape) != 0) {
        fprintf(stderr, "kgen-bench-plot: %s:%d: tag '%s' in layout %s names another shape (%s) than %s:%d (%s): "
                        "give each shape a tag of its own\n",
                path, line, tag, layout, shape, cl->rows[0].path, cl->rows[0].line, cl->shape);
        goto fail;
    }
    for (int i = 0; i < cl->nrows; i++)
        if (strcmp(cl->rows[i].kernel, kernel) == 0) {
            fprintf(stderr, "kgen-bench-plot: %s:%d: tag '%s' in layout %s repeats %s:%d (the same kernel%s%s "
                            "measured twice): give each measurement once\n",
                    path, line, tag, layout, cl->rows[i].path, cl->rows[i].line, kernel[0] ? " " : "", kernel);
            goto fail;
        }
    if (cl->nrows == cl->cap) {
        int cap = cl->cap ? 2 * cl->cap : 4;
        seen_row *grown = realloc(cl->rows, (size_t)cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "kgen-bench-plot: out of memory\n");
            goto fail;
        }
        cl->rows = grown, cl->cap = cap;
    }
    if (cl->nrows == 0)
        cl->shape = shape;
    else
        free(shape);
    cl->rows[cl->nrows++] = (seen_row){kernel, path, line};
    return 0;
fail:
    free(shape);
    free(kernel);
    return -1;
}

static void free_chart(chart *c)
{
    for (int s = 0; s < c->nshapes; s++)
        for (int l = 0; l < 4; l++) {
            cell *cl = &c->cells[s][l];
            for (int i = 0; i < cl->nrows; i++)
                free(cl->rows[i].kernel);
            free(cl->rows);
            free(cl->shape);
        }
}

static int read_csv(const char *path, chart *c)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kgen-bench-plot: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL; /* a whole line, however long: no tail read as a row of its own */
    size_t cap = 0;
    char *field[MAX_FIELDS];
    int lineno = 1, rc = -1, rows = 0;
    if (getline(&line, &cap, f) < 0) {
        fprintf(stderr, "kgen-bench-plot: %s: empty, or not readable\n", path);
        goto out;
    }
    int nf = split(line, field, MAX_FIELDS);
    int ctag = column(field, nf, "tag"), clay = column(field, nf, "layout"), crat = column(field, nf, "ratio"),
        cok = column(field, nf, "ok");
    /* what tells shapes apart, and kernels (the columns present) */
    static const char *const shape_names[] = {"M", "N", "K", "lda", "ldb", "ldc"};
    static const char *const kernel_names[] = {"template", "config"};
    int cshape[6], ckernel[2];
    for (int i = 0; i < 6; i++)
        cshape[i] = column(field, nf, shape_names[i]);
    for (int i = 0; i < 2; i++)
        ckernel[i] = column(field, nf, kernel_names[i]);
    if (nf < 0 || ctag < 0 || clay < 0 || crat < 0) {
        fprintf(stderr, "kgen-bench-plot: %s: not a kgen-bench CSV (the header needs tag, layout and ratio)\n",
                path);
        goto out;
    }
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        int n = split(line, field, MAX_FIELDS);
        int l = -1;
        if (n == nf)
            for (int i = 0; i < 4; i++)
                if (strcmp(field[clay], layouts[i]) == 0)
                    l = i;
        char *end;
        double r = n == nf ? strtod(field[crat], &end) : 0.0;
        if (n != nf || l < 0 || end == field[crat] || *end || !(r > 0.0 && r < 1e6) || !field[ctag][0] ||
            strlen(field[ctag]) >= sizeof c->tags[0]) {
            fprintf(stderr, "kgen-bench-plot: %s:%d: expected %d fields, a tag of at most %zu characters, layout "
                            "nn, nt, tn or tt and a positive ratio\n",
                    path, lineno, nf, sizeof c->tags[0] - 1);
            goto out;
        }
        int s = shape_index(c, field[ctag]);
        if (s < 0) {
            fprintf(stderr, "kgen-bench-plot: more than %d shapes\n", MAX_SHAPES);
            goto out;
        }
        int ok = cok < 0 || strcmp(field[cok], "1") == 0;
        cell *cl = &c->cells[s][l];
        char *shape = join(field, cshape, 6), *kernel = join(field, ckernel, 2);
        if (!shape || !kernel) {
            fprintf(stderr, "kgen-bench-plot: out of memory\n");
            free(shape);
            free(kernel);
            goto out;
        }
        if (add_row(cl, field[ctag], layouts[l], shape, kernel, path, lineno))
            goto out;
        if (cl->ratio == 0.0 || (ok && !cl->ok) || (ok == cl->ok && r > cl->ratio))
            cl->ratio = r, cl->ok = ok;
        rows++;
    }
    if (ferror(f)) {
        fprintf(stderr, "kgen-bench-plot: cannot read '%s': %s\n", path, strerror(errno));
        goto out;
    }
    if (rows == 0) {
        fprintf(stderr, "kgen-bench-plot: %s: no rows\n", path);
        goto out;
    }
    rc = 0;
out:
    free(line);
    fclose(f);
    return rc;
}

/* Text with XML's special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

static int write_svg(FILE *f, const chart *c, const char *title)
{
    int used[4] = {0}, nused = 0, slot[4];
    double ymax = 1.2, logsum[4] = {0}, count[4] = {0};
    for (int s = 0; s < c->nshapes; s++)
        for (int l = 0; l < 4; l++)
            if (c->cells[s][l].ratio > 0.0) {
                used[l] = 1;
                if (c->cells[s][l].ratio > ymax)
                    ymax = c->cells[s][l].ratio;
                if (c->cells[s][l].ok) {
                    logsum[l] += log(c->cells[s][l].ratio);
                    count[l]++;
                }
            }
    for (int l = 0; l < 4; l++)
        slot[l] = used[l] ? nused++ : -1;
    double tick = ymax <= 2.0 ? 0.1 : ymax <= 5.0 ? 0.5 : pow(10.0, floor(log10(ymax)));
    ymax = ceil(ymax / tick - 1e-9) * tick;
    const double bar = 7.0, gap = 8.0, left = 56.0, top = 48.0, plot_h = 300.0, bottom = 110.0;
    const double group = nused * bar + gap, plot_w = c->nshapes * group;
    /* wide enough for the title too (about 8 px a character at 14 px) */
    const double width = fmax(left + plot_w + 150.0, left + 8.0 * (double)strlen(title) + 20.0);
    const double height = top + plot_h + bottom;
#define Y(v) (top + plot_h - (v) / ymax * plot_h)
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" "
               "font-size=\"14\">", left);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\">"
               "kgen speed / cuBLAS speed</text>\n",
            top + plot_h / 2, top + plot_h / 2);
    for (int i = 0; i * tick <= ymax + 1e-9; i++) {
        double v = i * tick;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
                left, Y(v), left + plot_w, Y(v), left - 4, Y(v) + 4, tick < 1.0 ? 1 : 0, v);
    }
    for (int s = 0; s < c->nshapes; s++) {
        double x0 = left + s * group + gap / 2;
        for (int l = 0; l < 4; l++) {
            const cell *cl = &c->cells[s][l];
            if (cl->ratio <= 0.0)
                continue;
            double x = x0 + slot[l] * bar, y = Y(cl->ratio);
            fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" ", x, y, bar - 1,
                    top + plot_h - y);
            if (cl->ok)
                fprintf(f, "fill=\"%s\"><title>", colours[l]);
            else
                fputs("fill=\"none\" stroke=\"red\"><title>", f);
            xml_text(f, c->tags[s]);
            fprintf(f, " %s: %.3f%s</title></rect>\n", layouts[l], cl->ratio, cl->ok ? "" : " (wrong result)");
        }
        double xc = x0 + nused * bar / 2;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-60 %.1f %.1f)\">", xc,
                top + plot_h + 12, xc, top + plot_h + 12);
        xml_text(f, c->tags[s]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<line class=\"parity\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
               "stroke-dasharray=\"6 3\"/>\n",
            left, Y(1.0), left + plot_w, Y(1.0));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top + plot_h,
            left + plot_w, top + plot_h);
    for (int l = 0, row = 0; l < 4; l++) {
        if (!used[l])
            continue;
        double y = top + 14.0 * row++;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                   "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">%s",
                left + plot_w + 12, y, colours[l], left + plot_w + 26, y + 9, layouts[l]);
        if (count[l] > 0)
            fprintf(f, " (geo. mean %.3f)", exp(logsum[l] / count[l]));
        fputs("</text>\n", f);
    }
#undef Y
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kgen-bench-plot -o OUT.svg [--title TEXT] CSV...\n"
               "  Draws kgen/cuBLAS per shape (x) and layout (a bar each) from kgen-bench's CSV files,\n"
               "  with a line at 1.0 and each layout's geometric mean in the legend ('-o -': standard output).\n");
}

int main(int argc, char **argv)
{
    const char *out = NULL, *title = NULL;
    static chart c;
    const char **csv = calloc((size_t)argc, sizeof *csv);
    int files = 0, rc = 2;
    if (!csv) {
        fprintf(stderr, "kgen-bench-plot: out of memory\n");
        return 1;
    }
    /* The options first, then the output's path, then the inputs: a bad -o
     * is reported before any file is read. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            rc = 0;
            goto done;
        }
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--title") == 0) {
            const char **dst = argv[i][1] == 'o' ? &out : &title;
            if (*dst) { /* each once: the second would silently win */
                fprintf(stderr, "kgen-bench-plot: %s given twice\n", argv[i]);
                goto done;
            }
            if (i + 1 >= argc) {
                fprintf(stderr, "kgen-bench-plot: %s needs a value\n", argv[i]);
                goto done;
            }
            *dst = argv[++i];
            continue;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "kgen-bench-plot: unknown option '%s'\n", argv[i]);
            usage(stderr);
            goto done;
        }
        csv[files++] = argv[i];
    }
    if (!out || files == 0) {
        fprintf(stderr, "kgen-bench-plot: %s\n", !out ? "give the output file with -o" : "no CSV files given");
        usage(stderr);
        goto done;
    }
    if (kgw_check_output("kgen-bench-plot", "-o", out))
        goto done;
    for (int i = 0; i < files; i++)
        if (kgw_not_input("kgen-bench-plot", "-o", out, csv[i]))
            goto done;
    for (int i = 0; i < files; i++)
        if (read_csv(csv[i], &c))
            goto done;
    char *svg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&svg, &len);
    int bad = !f;
    if (f) {
        bad |= write_svg(f, &c, title ? title : "kgen / cuBLAS (FP32)") != 0;
        bad |= fclose(f) != 0;
    }
    if (bad)
        fprintf(stderr, "kgen-bench-plot: out of memory\n");
    rc = bad || kgw_write_file("kgen-bench-plot", out, svg, len) ? 1 : 0;
    free(svg);
done:
    free_chart(&c);
    free(csv);
    return rc;
}
