"""A tiny shop: the example repository of `codegraph refine`."""
