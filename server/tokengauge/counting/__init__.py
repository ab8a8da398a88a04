"""Counting tokens before any calibration: the bundled encodings, text, images, whole requests,
Copilot's own view of them, the scales of raw counts, and the strings asked most."""
