// Loaded before vsce (build-vsix.sh: NODE_OPTIONS=--require). vsce lints every packaged file for
// secrets with secretlint, whose profiler looks each performance mark up among all the earlier
// ones: quadratic in files, about 20 s of the 44 s it took to package 2,000 files. Without a
// PerformanceObserver the profiler observes nothing (its own fallback); the lint is the same.
'use strict';
require('node:perf_hooks').PerformanceObserver = undefined;
