"""Machine-translation data preparation (WMT14 EN-DE, IWSLT14 ES-EN documents, the embedded
Bible ES-EN corpus). The bash recipes in ``data_prep/`` call these modules with
``python -m data_prep.mt.<module>``; every module has ``--help``."""
