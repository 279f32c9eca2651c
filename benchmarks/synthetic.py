"""Synthetic inputs the model suites share: a fairseq dictionary of a given size."""


def synthetic_dictionary(size: int):
    """A fairseq Dictionary of exactly ``size`` symbols (4 specials + ``w0``, ``w1``, ...)."""
    from fairseq.data import Dictionary

    dictionary = Dictionary()
    for i in range(size - len(dictionary)):
        dictionary.add_symbol(f"w{i}")
    return dictionary
