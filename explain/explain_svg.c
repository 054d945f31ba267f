/*
 * explain_svg.c -- the roofline as a hand-written SVG: log-log axes with a
 * line per decade, the memory roof (bandwidth x intensity) up to the ridge
 * point, the compute roof (FP32 peak) after it, the configuration's
 * shared-memory roof, and the configuration's point (predicted bound, and
 * what was measured); with --from-db every timed configuration of a sweep.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

#define W 760.0
#define H 500.0
#define LEFT 90.0
#define RIGHT 30.0
#define TOP 50.0
#define BOTTOM 60.0

typedef struct buf {
    char *s;
    size_t len, cap;
    int failed;
} buf;

static void put(buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n + 1;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* Text for an XML element or attribute: the five special characters. */
static void put_text(buf *b, const char *t)
{
    for (; *t; t++) {
        switch (*t) {
        case '&': put(b, "&amp;"); break;
        case '<': put(b, "&lt;"); break;
        case '>': put(b, "&gt;"); break;
        case '"': put(b, "&quot;"); break;
        case '\'': put(b, "&apos;"); break;
        default: put(b, "%c", *t);
        }
    }
}

typedef struct axes {
    double x0, x1, y0, y1; /* decades: log10 of the ranges */
} axes;

static double px(const axes *a, double x) { return LEFT + (log10(x) - a->x0) / (a->x1 - a->x0) * (W - LEFT - RIGHT); }
static double py(const axes *a, double y) { return H - BOTTOM - (log10(y) - a->y0) / (a->y1 - a->y0) * (H - TOP - BOTTOM); }

static void widen(double v, double *lo, double *hi)
{
    if (!(v > 0) || !isfinite(v))
        return;
    if (v < *lo)
        *lo = v;
    if (v > *hi)
        *hi = v;
}

/* Whole decades around everything drawn, at least three of GFLOP/s. */
static void choose_axes(const kgc_explain *x, axes *a)
{
    double xl = 0.1, xh = 1000, yl = 1e30, yh = 0;
    widen(x->traffic.ai_tiles / 2, &xl, &xh);
    widen(x->traffic.ai_once * 2, &xl, &xh);
    widen(x->ridge * 10, &xl, &xh);
    for (int i = 0; i < x->npoints; i++)
        widen(x->points[i].intensity, &xl, &xh);
    a->x0 = floor(log10(xl));
    a->x1 = ceil(log10(xh));
    widen(x->mach.peak_gflops * 1.5, &yl, &yh);
    widen(x->bound_pred / 2, &yl, &yh);
    if (x->measured)
        widen(x->tflops * 1e3 / 2, &yl, &yh);
    for (int i = 0; i < x->npoints; i++)
        widen(x->points[i].tflops * 1e3 / 2, &yl, &yh);
    a->y1 = ceil(log10(yh));
    a->y0 = floor(log10(yl));
    if (a->y0 > a->y1 - 3)
        a->y0 = a->y1 - 3;
}

static void draw_grid(buf *b, const axes *a)
{
    put(b, "<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">\n");
    for (double d = a->x0; d <= a->x1 + 1e-9; d++)
        put(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(a, pow(10, d)), TOP, px(a, pow(10, d)),
            H - BOTTOM);
    for (double d = a->y0; d <= a->y1 + 1e-9; d++)
        put(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", LEFT, py(a, pow(10, d)), W - RIGHT,
            py(a, pow(10, d)));
    put(b, "</g>\n<g class=\"ticks\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#333\">\n");
    for (double d = a->x0; d <= a->x1 + 1e-9; d++)
        put(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", px(a, pow(10, d)), H - BOTTOM + 18,
            pow(10, d));
    for (double d = a->y0; d <= a->y1 + 1e-9; d++)
        put(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", LEFT - 6, py(a, pow(10, d)) + 4,
            pow(10, d));
    put(b, "</g>\n");
    put(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", LEFT, TOP,
        W - LEFT - RIGHT, H - TOP - BOTTOM);
    put(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\">"
           "arithmetic intensity (FLOP per byte of device memory, log scale)</text>\n",
        (LEFT + W - RIGHT) / 2, H - 16);
    put(b, "<text transform=\"translate(20 %.1f) rotate(-90)\" text-anchor=\"middle\" font-family=\"sans-serif\" "
           "font-size=\"13\">GFLOP/s (log scale)</text>\n",
        (TOP + H - BOTTOM) / 2);
}

/* The memory roof from the left edge (or where it enters the plot) to the
 * ridge, then the compute roof to the right edge. */
static void draw_roofs(buf *b, const axes *a, const kgc_explain *x)
{
    const kgc_machine *m = &x->mach;
    double xmin = pow(10, a->x0), xmax = pow(10, a->x1), ymin = pow(10, a->y0);
    double xs = xmin;
    if (m->bandwidth_gbs * xs < ymin)
        xs = ymin / m->bandwidth_gbs;
    put(b, "<polyline class=\"roof\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2.5\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
        px(a, xs), py(a, m->bandwidth_gbs * xs), px(a, x->ridge), py(a, m->peak_gflops), px(a, xmax),
        py(a, m->peak_gflops));
    put(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#c00\" "
           "text-anchor=\"end\">FP32 peak %.1f TFLOP/s</text>\n",
        W - RIGHT - 4, py(a, m->peak_gflops) - 6, m->peak_gflops / 1e3);
    double lx = xs * 3;
    put(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#c00\">"
           "memory %.0f GB/s</text>\n",
        px(a, lx) + 6, py(a, m->bandwidth_gbs * lx) - 8, m->bandwidth_gbs);
    put(b, "<line class=\"ridge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" stroke-dasharray=\"2,3\"/>\n",
        px(a, x->ridge), py(a, m->peak_gflops), px(a, x->ridge), H - BOTTOM);
    put(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#c00\">"
           "ridge %.1f FLOP/B</text>\n",
        px(a, x->ridge) + 4, H - BOTTOM - 6, x->ridge);
    if (x->have_smem_roof && x->smem_bound_gflops < m->peak_gflops) {
        put(b, "<line class=\"smem-roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#06c\" "
               "stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n",
            LEFT, py(a, x->smem_bound_gflops), W - RIGHT, py(a, x->smem_bound_gflops));
        put(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#06c\">"
               "shared-memory roof of this kernel %.2f TFLOP/s</text>\n",
            LEFT + 6, py(a, x->smem_bound_gflops) - 5, x->smem_bound_gflops / 1e3);
    }
}

static void draw_points(buf *b, const axes *a, const kgc_explain *x)
{
    double ai = x->traffic.ai_tiles;
    for (int i = 0; i < x->npoints; i++) {
        put(b, "<circle class=\"sweep\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#888\" fill-opacity=\"0.6\"><title>",
            px(a, x->points[i].intensity), py(a, x->points[i].tflops * 1e3));
        put_text(b, x->points[i].config);
        put(b, ": %.2f TFLOP/s</title></circle>\n", x->points[i].tflops);
    }
    put(b, "<circle class=\"predicted\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\">"
           "<title>predicted bound %.2f TFLOP/s</title></circle>\n",
        px(a, ai), py(a, x->bound_pred), x->bound_pred / 1e3);
    put(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"12\">"
           "predicted %.2f TFLOP/s</text>\n",
        px(a, ai) + 10, py(a, x->bound_pred) - 8, x->bound_pred / 1e3);
    if (x->measured) {
        put(b, "<circle class=\"measured\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"#090\"><title>measured %.2f "
               "TFLOP/s</title></circle>\n",
            px(a, ai), py(a, x->tflops * 1e3), x->tflops);
        put(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#090\">"
               "measured %.2f TFLOP/s</text>\n",
            px(a, ai) + 10, py(a, x->tflops * 1e3) + 16, x->tflops);
    }
}

char *kgc_explain_svg(const kgc_explain *x)
{
    buf b = {malloc(16384), 0, 16384, 0};
    if (!b.s)
        return NULL;
    axes a;
    choose_axes(x, &a);
    put(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    put(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", W,
        H, W, H);
    put(&b, "<title>");
    put_text(&b, "Roofline of ");
    put_text(&b, x->tmpl);
    put_text(&b, " ");
    put_text(&b, x->config);
    put(&b, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    put(&b, "<text class=\"title\" x=\"%.1f\" y=\"22\" font-family=\"sans-serif\" font-size=\"14\" font-weight=\"bold\">",
        LEFT);
    put_text(&b, "Roofline: ");
    put_text(&b, x->mach.part[0] ? x->mach.part : x->mach.lim.name);
    put(&b, x->npoints ? ", %d timed configurations of the sweep" : "", x->npoints);
    put(&b, "</text>\n<text class=\"subtitle\" x=\"%.1f\" y=\"40\" font-family=\"monospace\" font-size=\"11\">", LEFT);
    put_text(&b, x->tmpl);
    put_text(&b, " ");
    put_text(&b, x->config);
    put(&b, " at %lldx%lldx%lld</text>\n", x->shape.m, x->shape.n, x->shape.k);
    draw_grid(&b, &a);
    draw_roofs(&b, &a, x);
    draw_points(&b, &a, x);
    put(&b, "</svg>\n");
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
