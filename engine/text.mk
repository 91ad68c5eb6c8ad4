# engine/text.mk: tokenizers and evaluation suites.
