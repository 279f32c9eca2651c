"""The one error transfer reports: its message names the flag or the file at fault."""


class TransferError(RuntimeError):
    """Bad input or state; the message names the flag (``--input``, ``--save-dir``, ...)."""
