"""Quadrants' `quadrants.lang.ast` import path (its AST transformers live in quadrants/frontend/ here)."""
