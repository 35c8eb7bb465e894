// SPDX-License-Identifier: LGPL-2.1-or-later
/* An SVG picture of the wafer: the mesh, and each layer's region. */
#include <errno.h>
#include <stdio.h>

#include "compiler_internal.h"

#define SVG_SIZE	800.0	/* the longer side of the wafer, in pixels */
#define SVG_MARGIN	20.0
#define SVG_LEGEND	22.0	/* height of one legend line */
#define SVG_TOP		56.0	/* the wafer's top edge, below the two-line heading */

static const char *const colors[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NUM_COLORS (sizeof(colors) / sizeof(colors[0]))

/* Text for XML: the characters that need it escaped. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

int wsecc_write_svg(FILE *f, const struct wsecc_plan *plan)
{
	const struct wse_wafer *w = &plan->wafer;
	double scale = SVG_SIZE / (double)(w->width > w->height ? w->width : w->height);
	double ww = w->width * scale, wh = w->height * scale;
	int pipelined = plan->mode == WSEP_MODE_PIPELINED;
	double legend_y = SVG_TOP + wh + 10;
	double height = legend_y + SVG_LEGEND * (plan->num_layers + 2) + SVG_MARGIN;
	double width = ww + 2 * SVG_MARGIN < 640 ? 640 : ww + 2 * SVG_MARGIN;
	char title[256], what[128];

	snprintf(title, sizeof(title), "%s on %s (%ux%u PEs)", plan->name, w->name, w->width,
		 w->height);
	snprintf(what, sizeof(what), "%s, %.4g samples/s estimated",
		 pipelined ? "layer-pipelined" : "weight streaming", plan->summary.samples_per_s);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"13\">\n",
		width, height, width, height);
	fprintf(f, "<title>");
	put_text(f, title);
	fprintf(f, ": %s</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", what);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"15\" font-weight=\"bold\">",
		SVG_MARGIN, SVG_MARGIN + 2);
	put_text(f, title);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", SVG_MARGIN,
		SVG_MARGIN + 20, what);
	/* The mesh: x grows to the right, y (rows) downwards, as in the report. */
	fprintf(f, "<rect id=\"wafer\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "fill=\"#eeeeee\" stroke=\"#333333\"/>\n",
		SVG_MARGIN, SVG_TOP, ww, wh);
	for (uint32_t i = 0; i < plan->num_layers; i++) {
		const struct wsecc_layer_plan *lp = &plan->layers[i];
		const char *c = colors[i % NUM_COLORS];
		double x = SVG_MARGIN + lp->region.x * scale, y = SVG_TOP + lp->region.y * scale;
		double rw = lp->region.w * scale, rh = lp->region.h * scale;
		double ly = legend_y + SVG_LEGEND * i;

		if (!pipelined) {
			/* Every layer uses the whole wafer in turn: show thin bands. */
			rh = wh / plan->num_layers;
			y = SVG_TOP + rh * i;
		}
		fprintf(f, "<rect id=\"layer%u\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			   "fill=\"%s\" fill-opacity=\"0.85\" stroke=\"#222222\" stroke-width=\"0.5\">"
			   "<title>layer %u: ",
			i, x, y, rw, rh, c, i);
		put_text(f, plan->label[i]);
		fprintf(f, ", %llu PEs</title></rect>\n", (unsigned long long)lp->pes);
		if (rw >= 18 && rh >= 16)
			fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" fill=\"white\" font-weight=\"bold\">L%u</text>\n",
				x + 3, y + 14, i);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n",
			SVG_MARGIN, ly, c);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">L%u: ", SVG_MARGIN + 20, ly + 12, i);
		put_text(f, plan->label[i]);
		fprintf(f, ", region %u,%u %ux%u, %llu PEs, %.1f cycles/%s (%s)</text>\n",
			lp->region.x, lp->region.y, lp->region.w, lp->region.h,
			(unsigned long long)lp->pes, lp->est.stage_cycles,
			pipelined ? "sample" : "batch", wsep_limit_name(lp->est.limit));
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555555\">%s</text>\n", SVG_MARGIN,
		legend_y + SVG_LEGEND * plan->num_layers + 12,
		pipelined ? "Each layer is a column strip; activations flow left to right."
			  : "Weight streaming: each layer runs on the whole wafer in turn (bands show the order).");
	fprintf(f, "</svg>\n");
	return ferror(f) ? -EIO : 0;
}
