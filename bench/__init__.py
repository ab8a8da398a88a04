"""The benchmarks: each script runs from the repository's root as `python -m bench.<script>`
(`docs/BENCHMARKS.md` lists them with their figures); `benchlib` is what they share."""
