"""Corpus model, tag schemes, and readers/writers (no Qt)."""

from .convert import convert_file
from .formats import (
    FORMATS,
    Reader,
    atomic_open,
    iter_sentences,
    normalize_format,
    read_corpus,
    sniff_format,
    write_corpus,
)
from .model import Corpus, Document, Sentence, Span, Token
from .schemes import SCHEMES, SchemeError, decode, detect_scheme, encode, normalize_scheme

__all__ = [
    "FORMATS",
    "SCHEMES",
    "Corpus",
    "Document",
    "Reader",
    "SchemeError",
    "Sentence",
    "Span",
    "Token",
    "atomic_open",
    "convert_file",
    "decode",
    "detect_scheme",
    "encode",
    "iter_sentences",
    "normalize_format",
    "normalize_scheme",
    "read_corpus",
    "sniff_format",
    "write_corpus",
]
