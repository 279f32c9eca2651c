"""Studies beyond the paper's recipes, each a package run with ``python -m experiments.<study>.<module>``
from the repository root."""
