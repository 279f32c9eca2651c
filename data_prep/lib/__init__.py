"""Shared pieces of the data recipes (``data_prep/<dataset>/prepare.sh``).

``common.sh`` (sourced by every shell recipe): messages, --help and option parsing, claiming an
output directory, stages, locking. ``fetch``: download a file with resume and checksum
verification, or take it from a local mirror (``http_get``: the network half; ``checksums``: the
per-recipe ``SHA256SUMS`` files). ``dest``: the Python recipes' output directories.
``outputs``: the tools' refusal to overwrite a file. ``archive``: open a zip archive that must hold
given members. ``cli``: the parser of a tool run as ``python -m``. ``mt.sh`` (sourced by the two
translation recipes): binarising and the evaluation metadata.
"""
