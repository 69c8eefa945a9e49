"""Corpus model, tag schemes, and readers/writers (no Qt)."""

from .model import Corpus, Document, Sentence, Span, Token
from .schemes import SCHEMES, SchemeError, decode, detect_scheme, encode, normalize_scheme
from .formats import (FORMATS, Reader, atomic_open, convert_file, iter_sentences, normalize_format,
                      read_corpus, sniff_format, write_corpus)

__all__ = ["Corpus", "Document", "Sentence", "Span", "Token", "SCHEMES", "SchemeError", "decode",
           "detect_scheme", "encode", "normalize_scheme", "FORMATS", "Reader", "atomic_open", "convert_file",
           "iter_sentences", "normalize_format", "read_corpus", "sniff_format", "write_corpus"]
