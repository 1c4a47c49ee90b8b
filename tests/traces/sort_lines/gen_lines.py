"""Writes the input of tests/traces/record_sort_lines.sh to stdout.

Text lines of 4-16 words drawn from a 20,000-word vocabulary with Zipf(1)
word popularity (word i has weight 1/(i+1)), like natural-language text:
common prefixes, so the comparisons read past the first bytes. Deterministic:
Python's random.Random(1) (Mersenne Twister; random(), randint() and
choices(cum_weights=) draw the same numbers on every Python 3 since 3.6).

  python3 gen_lines.py BYTES > input.txt
"""
import random
import sys


def main():
    n_bytes = int(sys.argv[1])
    r = random.Random(1)
    letters = 'abcdefghijklmnopqrstuvwxyz'
    words = [''.join(r.choice(letters) for _ in range(r.randint(2, 10)))
             for _ in range(20000)]
    cum = []
    total = 0.0
    for i in range(len(words)):
        total += 1.0 / (i + 1)
        cum.append(total)
    out = []
    n = 0
    while n < n_bytes:
        line = ' '.join(r.choices(words, cum_weights=cum,
                                  k=r.randint(4, 16))) + '\n'
        out.append(line)
        n += len(line)
    sys.stdout.write(''.join(out))


if __name__ == '__main__':
    main()
