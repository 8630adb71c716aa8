"""cProfile inside python3 -m fnprof (3.12+: two sys.monitoring tools): pure.py's run
profiled by both; cProfile's stats go to argv[1]."""
import cProfile
import sys

prof = cProfile.Profile()
prof.enable()
import pure  # noqa: E402,F401 (runs its main())
prof.disable()
prof.dump_stats(sys.argv[1])
# SPDX-License-Identifier: MIT
