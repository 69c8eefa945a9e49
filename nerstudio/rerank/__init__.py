"""Reranking of N-best candidates: global features (Collins 2002 §3), boosting (§4.2), the
perceptron family (§4.3; Collins 2002a; Kazama & Torisawa 2007) and the kernel perceptron
(Collins & Duffy 2002)."""
