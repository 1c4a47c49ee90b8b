#!/usr/bin/env python3
"""How much of a trace's fast-tier share needs promotion at the sample itself.

Replays a trace (`hotpage dump` of it) against one simple rule, the
tpp-ideal model's in essence: a slow-tier page sampled twice within
--window-ms is promoted, the fast tier's least recently sampled page goes
to the slow tier. The promotion takes effect --delay-ms after the sample
that triggered it, for each delay given. Prints the share of samples served
by the fast tier and the promotions, per delay.

Real programs' traces are bursty: a page drawn once is often drawn again
within milliseconds, then not for seconds. A rule that moves the page at
the sample (the kernel's hint fault does, for one access per scan pass;
the simulator's tpp-ideal does, for every sample) keeps the rest of the
burst on the fast tier; anything that moves pages after a delay (a policy
round, a migration thread's tick) does not. The share at delay 0 against
the share at a delay shows how much of a policy's gap to tpp-ideal is
that, and not its ranking:

  bazel build -c opt //tools:hotpage
  python3 tools/simulate/reaction_delay.py tests/traces/sort_lines.hpt \
      --fast-pages 190

(--fast-pages: the fast tier's pages at the ratio, as `hotpage simulate`
prints it.) Pure Python; 40k samples take about a second per delay.
"""

import argparse
import collections
import heapq
import subprocess
import sys


def read_samples(hotpage, trace, pid):
  out = subprocess.run([hotpage, "dump", trace], capture_output=True,
                       text=True, check=False)
  if out.returncode != 0:
    sys.exit("reaction_delay.py: %s dump %s failed: %s" %
             (hotpage, trace, out.stderr.strip()))
  samples = []
  pids = collections.Counter()
  for line in out.stdout.splitlines():
    if line.startswith("#"):
      continue
    f = line.split()
    pids[int(f[0])] += 1
    samples.append((int(f[3]), int(f[4], 16) >> 12, int(f[0])))
  if not samples:
    sys.exit("reaction_delay.py: %s has no samples" % trace)
  want = pid if pid else pids.most_common(1)[0][0]
  samples = [(t, page) for t, page, p in samples if p == want]
  samples.sort()
  return samples


def replay(samples, fast_pages, window_ns, delay_ns):
  fast = collections.OrderedDict()  # page -> None, least recent first
  last = {}  # slow-tier page -> time of its last sample
  pending = []  # (time the move takes effect, page)
  queued = set()
  served = 0
  moves = 0
  for t, page in samples:
    while pending and pending[0][0] <= t:
      _, p = heapq.heappop(pending)
      queued.discard(p)
      if p in fast:
        continue
      if len(fast) >= fast_pages:
        fast.popitem(last=False)
      fast[p] = None
      moves += 1
    if page in fast:
      served += 1
      fast.move_to_end(page)
      continue
    prev = last.get(page)
    last[page] = t
    if prev is not None and t - prev <= window_ns and page not in queued:
      heapq.heappush(pending, (t + delay_ns, page))
      queued.add(page)
  return served / len(samples), moves


def main():
  ap = argparse.ArgumentParser(
      description=__doc__.split("\n\n")[0],
      formatter_class=argparse.RawDescriptionHelpFormatter,
      epilog="\n\n".join(__doc__.split("\n\n")[1:]))
  ap.add_argument("trace", help="a .hpt trace")
  ap.add_argument("--fast-pages", type=int, required=True,
                  help="fast-tier capacity in 4 KiB pages")
  ap.add_argument("--window-ms", type=float, default=1000,
                  help="two samples within this make a page a candidate "
                  "(default 1000: the kernel's hot threshold)")
  ap.add_argument("--delays-ms", default="0,10,50,250,1000",
                  help="comma-separated delays from the sample to the move")
  ap.add_argument("--pid", type=int, default=0,
                  help="the process (default: the one with most samples)")
  ap.add_argument("--hotpage", default="bazel-bin/tools/hotpage",
                  help="the hotpage binary (default bazel-bin/tools/hotpage)")
  args = ap.parse_args()
  if args.fast_pages <= 0:
    ap.error("--fast-pages must be positive")
  try:
    delays = [float(d) for d in args.delays_ms.split(",") if d.strip()]
  except ValueError:
    ap.error("--delays-ms: not a list of numbers: %r" % args.delays_ms)
  if not delays or min(delays) < 0:
    ap.error("--delays-ms: give one or more delays >= 0")
  samples = read_samples(args.hotpage, args.trace, args.pid)
  print("%s: %d samples, %d fast pages, window %g ms" %
        (args.trace, len(samples), args.fast_pages, args.window_ms))
  print("%10s %12s %10s" % ("delay ms", "fast share", "moves"))
  for d in delays:
    share, moves = replay(samples, args.fast_pages, args.window_ms * 1e6,
                          d * 1e6)
    print("%10g %12.3f %10d" % (d, share, moves))


if __name__ == "__main__":
  main()
