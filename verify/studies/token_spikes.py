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

__all__ = ["check", "main"]


def check(V: int, N: int, weights, seed: int, signs: str = "iid", top: int = 5) -> list[dict]:
    """For the ``top`` largest eigenvalues of one sampled ``D``: the eigenvalue, the token its eigenvector is most on
    (and the squared weight there), its counts per position, ``D_vv`` and the root of the cavity equation."""
    import scipy.sparse as sps

    from derive import Model
    from derive.vocabulary.draw.sampling import sample_token_matrix

    w = np.asarray(weights, dtype=float)
    s = V / N
    A = sample_token_matrix(np.random.default_rng(seed), Model(T=len(w), signs=signs).signs, w, V, N)
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
