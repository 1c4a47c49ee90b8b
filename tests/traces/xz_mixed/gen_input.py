"""Writes the input of tests/traces/record_xz_mixed.sh to stdout.

Two parts, one after the other:
  1. TEXT_BYTES of text: lines of 4-16 words from a 20,000-word vocabulary
     with Zipf(1) word popularity (word i has weight 1/(i+1)), as in
     natural language: compressible, many repeated strings;
  2. RANDOM_BYTES of uniformly random bytes: incompressible, no matches.
Deterministic: Python's random.Random(1) (Mersenne Twister; random(),
randint(), choices(cum_weights=) and getrandbits() draw the same numbers on
every Python 3 since 3.6).

  python3 gen_input.py TEXT_BYTES RANDOM_BYTES > input
"""
import random
import sys


def main():
    text_bytes = int(sys.argv[1])
    random_bytes = int(sys.argv[2])
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
    while n < text_bytes:
        line = ' '.join(r.choices(words, cum_weights=cum,
                                  k=r.randint(4, 16))) + '\n'
        out.append(line)
        n += len(line)
    sys.stdout.buffer.write(''.join(out).encode('ascii'))
    sys.stdout.buffer.write(r.getrandbits(8 * random_bytes).to_bytes(
        random_bytes, 'little'))


if __name__ == '__main__':
    main()
