"""Softmax against ABC translation at small scale, on the embedded Bible ES-EN corpus (see README.md)."""
