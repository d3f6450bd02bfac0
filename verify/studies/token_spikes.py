r"""The spikes of the token matrix at more than one nonzero weight against their cavity equation (notes/finite_vocabulary.md,
"More nonzero weights beyond the sampled range"): the first piece of a large-``d`` method for ``T >= 2``.

Seen from a token ``v`` used in the sequences ``n``, the Schur complement of :math:`D = sAA^\top` (:math:`s = V/N`) at
``v`` and the Sherman–Morrison formula for each sequence (whose other tokens still share it) give the eigenvalue
:math:`\tau` of the spike of ``v`` as the root of

.. math:: \tau = \sum_{n \ni v}\frac{s\,w_{t_n}^2}{1 - s\,X_n(\tau)},\qquad
          X_n(\tau) = \sum_{u \in n,\,u \ne v}w_{t_u}^2\,[(\tau - D^{(v,n)})^{-1}]_{uu},

:math:`D^{(v,n)}` the token matrix without ``v`` and without the sequence ``n`` (exact on a tree; the token–sequence graph
is one locally). :func:`check` takes a sampled token matrix, its top eigenpairs, the token each is localized on, and the
root of the equation with the cavity resolvents of that same matrix; ``python -m verify.studies.token_spikes V seed``
prints them.
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["check", "cavity_population", "spike_tail", "sampled_tail", "main"]


def check(V: int, N: int, weights, seed: int, signs: str = "iid", top: int = 5) -> list[dict]:
    """For the ``top`` largest eigenvalues of one sampled ``D``: the eigenvalue, the token its eigenvector is most on
    (and the squared weight there), its counts per position, ``D_vv`` and the root of the cavity equation."""
    import scipy.sparse as sps

    from derive.model.families import parse_signs
    from derive.vocabulary.finite_size import sample_token_matrix

    w = np.asarray(weights, dtype=float)
    s = V / N
    A = sample_token_matrix(np.random.default_rng(seed), parse_signs(signs), w, V, N)
    rows = sps.csr_matrix((A.vals, (A.rows, A.cols)), shape=(V, N))
    columns = rows.tocsc()
    D = (s * (rows @ rows.T)).toarray()
    values, vectors = np.linalg.eigh(D)
    out = []
    for j in range(1, top + 1):
        tau, phi = float(values[-j]), vectors[:, -j]
        v = int(np.argmax(np.abs(phi)))
        keep = np.arange(V) != v
        index = np.cumsum(keep) - 1
        lam, Phi = np.linalg.eigh(D[np.ix_(keep, keep)])  # D without v; a sequence n is then removed by Sherman-Morrison
        cavities = []
        for n in rows[v].indices:
            a = columns[:, n].toarray().ravel()
            others = [(index[u], a[u]) for u in columns[:, n].indices if u != v]
            cavities.append((a[v], Phi.T @ a[keep], others))

        def right_side(t):
            total = 0.0
            g = 1 / (t - lam)
            for wv, a_hat, others in cavities:
                Ra = Phi @ (g * a_hat)
                denominator = 1 + s * float(a_hat @ (g * a_hat))  # (R^-1 + s a a^T)^-1 = R - s R a a^T R / (1 + s a^T R a)
                X = 0.0
                for i, wu in others:
                    Rii = float((Phi[i] ** 2) @ g)
                    X += wu**2 * (Rii - s * Ra[i] ** 2 / denominator)
                total += s * wv**2 / (1 - s * X)
            return total

        t = tau
        for _ in range(8):
            t = right_side(t)
        counts = [int(np.sum(np.isclose(rows[v].data, x))) for x in w]
        out.append({"tau": tau, "token": v, "weight": float(phi[v] ** 2), "counts": counts,
                    "diagonal": float(D[v, v]), "root": float(t)})
    return out


def _sequence_terms(r: np.ndarray, K: np.ndarray, w: np.ndarray, s: float, rng) -> np.ndarray:
    """For tokens with counts ``K`` (``n x T``): :math:`F = \sum_{t,j} s w_t^2/(1 - s X_{t,j})`, each :math:`X_{t,j}` the
    weighted sum of ``T - 1`` cavity resolvents drawn from the population ``r``."""
    n, T = K.shape
    owner = np.repeat(np.arange(n), K.sum(axis=1))
    position = np.concatenate([np.repeat(np.arange(T), k) for k in K]) if n else np.zeros(0, dtype=int)
    w2 = w**2
    X = np.zeros(owner.size)
    for t in range(T):
        X += np.where(position != t, w2[t] * r[rng.integers(0, r.size, owner.size)], 0.0)
    return np.bincount(owner, weights=s * w2[position] / (1 - s * X), minlength=n)


def cavity_population(weights, lam: float, y: float, P: int = 1 << 16, sweeps: int = 40, seed: int = 0) -> np.ndarray:
    r"""A population of the cavity resolvents :math:`r = [(y - D^{(\cdot)})^{-1}]_{vv}` at a real ``y`` above the bulk of
    ``D``: :math:`r = 1/(y - F)`, ``F`` of :func:`_sequence_terms` with the token's counts
    :math:`K_t \sim \mathrm{Poisson}(\lambda)` (the nonzero ``weights``; :math:`s = 1/\lambda`), updated ``sweeps``
    times from :math:`r = 1/y`."""
    w = np.asarray([x for x in weights if x != 0], dtype=float)
    rng = np.random.default_rng(seed)
    r = np.full(P, 1 / y)
    for _ in range(sweeps):
        K = rng.poisson(lam, size=(P, w.size))
        r = 1 / (y - _sequence_terms(r, K, w, 1 / lam, rng))
    return r


def spike_tail(weights, lam: float, y: float, samples: int = 1 << 22, seed: int = 1, P: int = 1 << 16) -> tuple:
    r"""The chance that a token's spike of ``D`` stands above ``y``, :math:`P(F(y) > y)` (the right side of the cavity
    equation decreases in :math:`\tau`), over ``samples`` tokens with Poisson counts, their sequences' partners from
    :func:`cavity_population` at ``y``: ``(estimate, standard error)``; times ``V``, the expected number of spikes above
    ``y``."""
    w = np.asarray([x for x in weights if x != 0], dtype=float)
    r = cavity_population(w, lam, y, P, seed=seed)
    rng = np.random.default_rng(seed + 1)
    hits, chunk = 0, 1 << 18
    for start in range(0, samples, chunk):
        K = rng.poisson(lam, size=(min(chunk, samples - start), w.size))
        hits += int(np.sum(_sequence_terms(r, K, w, 1 / lam, rng) > y))
    p = hits / samples
    return p, float(np.sqrt(max(p, 1 / samples) / samples))


def sampled_tail(V: int, N: int, weights, ys, draws: int, seed: int = 0, signs: str = "iid") -> np.ndarray:
    """The mean number of eigenvalues of ``D`` above each ``y`` over ``draws`` sampled token matrices, and its
    standard error: ``(len(ys), 2)``."""
    import scipy.sparse as sps
    import scipy.sparse.linalg as spl

    from derive.model.families import parse_signs
    from derive.vocabulary.finite_size import sample_token_matrix

    counts = []
    for child in np.random.SeedSequence(seed).spawn(draws):
        A = sample_token_matrix(np.random.default_rng(child), parse_signs(signs), np.asarray(weights, float), V, N)
        rows = sps.csr_matrix((A.vals, (A.rows, A.cols)), shape=(V, N))
        D = (V / N) * (rows @ rows.T)
        top = spl.eigsh(D.astype(float), k=min(40, V - 2), which="LA", return_eigenvectors=False)
        counts.append([int(np.sum(top > y)) for y in ys])
    counts = np.array(counts, dtype=float)
    return np.column_stack([counts.mean(axis=0), counts.std(axis=0, ddof=1) / np.sqrt(draws)])


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    V, seed = int(argv[0]), int(argv[1])
    print("| eigenvalue of D | token's share of it | counts (K_1, K_2) | D_vv | root of the cavity equation | difference |")
    print("|---|---|---|---|---|---|")
    for r in check(V, V, [0.75, 0.25], seed):
        print(f"| {r['tau']:.5f} | {r['weight']:.3f} | {tuple(r['counts'])} | {r['diagonal']:.4f} | {r['root']:.5f} | "
              f"{r['root'] - r['tau']:+.1e} |")


if __name__ == "__main__":
    main()
