"""The persistent ledger: what the APIs really counted and what tokengauge learned, on disk."""
