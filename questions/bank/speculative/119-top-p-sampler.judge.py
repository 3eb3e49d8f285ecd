"""Trusted judge for 119-top-p-sampler (part ``keep``): reviewed code, never sent to the
sandbox.

The kept set is defined without reference to any sort: token i is kept when the
probability mass of the tokens strictly more probable than i is below p. Hidden logits
lie on a grid of 1/8 (so dividing by the temperature cannot merge or split ties in
float32), and p is drawn among the values no tie group's mass-above lies within 1e-3 of
(new logits when there are none), so a float32 solution cannot land on the other side
of the cutoff by rounding.
"""

import numpy as np

from grading.judge import Case, Judge

FULL_VOCAB = 131_072  # "128K"
CUTOFF_MARGIN = 1e-3


def mass_above(logits: np.ndarray, temperature: float) -> np.ndarray:
    """For each token, the softmax mass of the tokens strictly more probable (float64)."""
    scaled = logits.astype(np.float64) / temperature
    probs = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    above = np.empty_like(probs)
    for row in range(probs.shape[0]):
        values, inverse = np.unique(probs[row], return_inverse=True)  # ascending
        group_mass = np.bincount(inverse, weights=probs[row])
        strictly_above = np.concatenate([np.cumsum(group_mass[::-1])[::-1][1:], [0.0]])
        above[row] = strictly_above[inverse]
    return above


def reference_keep(logits: np.ndarray, p: float, temperature: float) -> np.ndarray:
    if temperature == 0:
        return logits == logits.max(axis=-1, keepdims=True)
    if p >= 1:
        return np.ones(logits.shape, dtype=bool)
    return mass_above(logits, temperature) < p


def _grid_logits(rng, rows: int, vocab: int, spread: float) -> np.ndarray:
    """Normal logits rounded to multiples of 1/8 (ties happen)."""
    return (np.round(rng.normal(0.0, spread, size=(rows, vocab)) * 8) / 8).astype(np.float32)


def _distinct_logits(rng, rows: int, vocab: int) -> np.ndarray:
    """Logits that are distinct multiples of 1/64 within each row (no ties at all)."""
    grid = np.arange(-8 * 64, 8 * 64 + 1)
    return np.stack([rng.choice(grid, size=vocab, replace=False) / 64 for _ in range(rows)]).astype(np.float32)


def _safe_p(rng, logits: np.ndarray, temperature: float, low: float, high: float) -> float | None:
    """A p in [low, high], on a 1e-4 grid, that no row's cutoff sits within CUTOFF_MARGIN
    of; None when no such p exists (many rows over a large vocabulary can leave no gap:
    the caller draws new logits). Drawn uniformly over the allowed set, not by trial, so
    a crowded case never exhausts a retry budget."""
    above = np.sort(mass_above(logits, temperature).ravel())
    centers = above[(above > low - CUTOFF_MARGIN) & (above < high + CUTOFF_MARGIN)]
    centers = np.concatenate([[low - CUTOFF_MARGIN], centers, [high + CUTOFF_MARGIN]])
    # Allowed intervals between neighbouring forbidden bands, shrunk by 1e-4 so that
    # rounding p to 4 decimals keeps it inside.
    starts = centers[:-1] + CUTOFF_MARGIN + 1e-4
    ends = centers[1:] - CUTOFF_MARGIN - 1e-4
    room = np.clip(ends - starts, 0.0, None)
    if room.sum() <= 0:
        return None
    for _ in range(100):
        interval = int(rng.choice(len(room), p=room / room.sum()))
        p = float(np.round(rng.uniform(starts[interval], ends[interval]), 4))
        if low <= p <= high and np.min(np.abs(above - p)) > CUTOFF_MARGIN:
            return p
    return None


def _with_safe_p(rng, draw, temperature: float, low: float, high: float):
    """Logits from ``draw()`` and a safe p for them, redrawing the logits when needed."""
    for _ in range(100):
        logits = draw()
        p = _safe_p(rng, logits, temperature, low, high)
        if p is not None:
            return logits, p
    raise RuntimeError("no safe p found in 100 draws of the logits")


class TopPJudge(Judge):
    def examples(self):
        return [
            Case("three distinct logits", "basic",
                 (np.array([[2.0, 1.0, 0.0]], dtype=np.float32), 0.7, 1.0)),
            Case("a tie at the cutoff", "ties",
                 (np.array([[1.0, 1.0, 1.0, 0.0]], dtype=np.float32), 0.5, 1.0)),
            Case("temperature zero", "greedy",
                 (np.array([[0.5, 3.0, 3.0, -1.0]], dtype=np.float32), 0.9, 0.0)),
        ]

    def hidden_cases(self, rng):
        cases = []
        for rows, vocab in ((4, 50), (8, 1000)):
            temperature = float(np.round(rng.uniform(0.5, 1.5), 3))
            logits, p = _with_safe_p(rng, lambda: _distinct_logits(rng, rows, vocab), temperature, 0.3, 0.95)
            cases.append(Case(f"random logits, vocabulary {vocab}", "basic", (logits, p, temperature)))
        # logits/T near 1000: exp overflows even float64 without subtracting the max.
        sharp, p = _with_safe_p(rng, lambda: self._sharp(rng), 0.01, 0.5, 0.99)
        cases.append(Case("temperature 0.01: exp(logits/T) overflows without subtracting the max", "basic",
                          (sharp, p, 0.01)))
        for name, rows, vocab in (("tied logits at the cutoff", 6, 64),
                                  ("tied logits at the cutoff, larger vocabulary", 4, 4096)):
            logits, p = self._ties(rng, rows, vocab)
            cases.append(Case(name, "ties", (logits, p, 1.0)))
        cases.append(Case("p = 1 on a 128K vocabulary", "full_vocab",
                          (self._full_vocab(rng), 1.0, float(np.round(rng.uniform(0.7, 1.3), 3)))))
        greedy = _grid_logits(rng, 6, 100, 1.0)
        for row in range(0, 6, 2):  # every other row ties at the maximum
            greedy[row, rng.choice(100, size=int(rng.integers(2, 5)), replace=False)] = greedy[row].max()
        cases.append(Case("temperature 0, with tied maxima", "greedy",
                          (greedy, float(np.round(rng.uniform(0.2, 1.0), 3)), 0.0)))
        return cases

    def reference(self, case):
        logits, p, temperature = case.args
        return reference_keep(logits, p, temperature)

    @staticmethod
    def _sharp(rng) -> np.ndarray:
        """Logits near -20 with six distinct ones at 10.00-10.05: at T = 0.01 they scale to
        ~1000, where exp overflows even float64."""
        sharp = _distinct_logits(rng, 4, 200) - np.float32(20.0)
        for row in range(4):
            top = rng.choice(200, size=6, replace=False)
            sharp[row, top] = (10.0 + 0.01 * rng.permutation(6)).astype(np.float32)
        return sharp

    @staticmethod
    def _ties(rng, rows: int, vocab: int):
        """Rows whose cutoff for one shared p falls inside the first token of a group of
        3-6 tied logits (with margins): 1-3 tokens above the group, the rest far below."""
        p = float(np.round(rng.uniform(0.4, 0.8), 4))
        logits = np.empty((rows, vocab), dtype=np.float32)
        for row in range(rows):
            for _ in range(1000):
                background = _grid_logits(rng, 1, vocab, 1.0)[0] - np.float32(np.ceil(np.log(vocab)) + 2)
                candidate = np.minimum(background, np.float32(-0.125))
                n_top, n_tie = int(rng.integers(1, 4)), int(rng.integers(3, 7))
                chosen = rng.choice(vocab, size=n_top + n_tie, replace=False)
                candidate[chosen[:n_top]] = np.round(rng.uniform(0.25, 2.0, n_top) * 8) / 8
                candidate[chosen[n_top:]] = 0.0
                scaled = candidate.astype(np.float64)
                probs = np.exp(scaled - scaled.max())
                probs /= probs.sum()
                group = candidate == 0.0
                start = probs[candidate > 0.0].sum()
                # p falls before the group's second token: a sort-based answer keeps
                # exactly one of the tied tokens, the right answer all of them.
                if start + CUTOFF_MARGIN < p < start + probs[group][0] - CUTOFF_MARGIN:
                    logits[row] = candidate
                    break
            else:
                raise RuntimeError("could not build a tie row")
        return logits, p

    @staticmethod
    def _full_vocab(rng) -> np.ndarray:
        """Three rows where cumulative sums reach 1 before the tail: one dominant token
        over a tail of ~1e-14 each; a tail that underflows float32 entirely; and one
        token over a tail ~1000 below it, which underflows even float64 at every
        temperature drawn (<= 1.3), so the top token's probability is exactly 1 and
        `cumsum - sorted < 1` drops the tail in any precision, on every seed. (That row
        replaced an ordinary spread, with which a float32 NumPy solution without the
        p = 1 rule passed on about 7 seeds in 100.)"""
        dominant = rng.normal(0.0, 0.5, FULL_VOCAB) - 32.0
        dominant[int(rng.integers(FULL_VOCAB))] = 0.0
        underflow = rng.normal(0.0, 1.0, FULL_VOCAB)
        underflow[rng.choice(FULL_VOCAB, size=FULL_VOCAB // 2, replace=False)] -= 200.0
        alone = rng.normal(0.0, 1.0, FULL_VOCAB) - 1000.0
        alone[int(rng.integers(FULL_VOCAB))] = 0.0
        rows = np.stack([dominant, underflow, alone])
        return np.round(rows * 8).astype(np.float32) / np.float32(8)

JUDGES = {"keep": TopPJudge()}
