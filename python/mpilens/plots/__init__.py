"""Per-family figures and report sections, drawn with matplotlib's Agg backend only."""
