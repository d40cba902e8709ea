"""Search by meaning: the embedding models, the vector store and the blended search."""

MODES = ("hybrid", "bm25", "vector")  # how search ranks: words and meaning blended, words only, meaning only
