"""The models tokengauge offers: a built-in table of well-known models, and the catalog that
merges configuration and discovery over it."""
