"""The errors of the download helper (``data_prep.lib.fetch``)."""


class FetchError(Exception):
    """Download or mirror failure (network, missing mirror file, HTTP error)."""


class ChecksumMismatch(FetchError):
    """The file's hash differs from the expected one."""

    def __init__(self, path, algorithm, expected, actual, kept_as=None, detail=None, origin=None):
        self.path, self.algorithm, self.expected, self.actual = path, algorithm, expected, actual
        self.origin = origin
        msg = "%s mismatch for %s: expected %s, got %s" % (algorithm, path, expected, actual)
        if detail:
            msg += " (%s)" % detail
        if kept_as:
            msg += " (the bad bytes are kept as %s for inspection)" % kept_as
        if origin:
            msg += "; %s" % origin
        super().__init__(msg)

    def again(self, **changes):
        """The same mismatch with some fields changed (e.g. where the bad bytes were kept)."""
        fields = dict(path=self.path, algorithm=self.algorithm, expected=self.expected, actual=self.actual,
                      origin=self.origin)
        fields.update(changes)
        return ChecksumMismatch(**fields)
