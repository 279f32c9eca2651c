"""Small reusable helpers for the data recipes (``data_prep/prepare_*.sh``).

``fetch``: download a file with resume and checksum verification, or take it from a local mirror.
"""
