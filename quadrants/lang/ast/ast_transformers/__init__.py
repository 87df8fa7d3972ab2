"""Quadrants' `quadrants.lang.ast.ast_transformers` import path: the modules programs and tests import."""
