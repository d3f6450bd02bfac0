r"""The Gaussian-equivalent law of pooled vectors whose weights vary from sequence to sequence (the ``softmax`` scheme;
notes/softmax.md, section 3).

**The model.** Given the table, sequence ``n`` pools :math:`c_n = a_n m + \sqrt{b_n}\,\Sigma^{1/2} g_n` (plus, for the
raw ``S``, the vocabulary mean :math:`W_n m_0` with :math:`W_n = 1`), with :math:`m = \mu + Zs/V` (so :math:`\|m\|^2 \to
\mu_2 + \delta`), :math:`\Sigma = Z P_\perp Z^\top/V` (law :math:`H = \mathrm{MP}_\delta`), :math:`g_n \sim N(0, I_d)`
and the pair :math:`(a_n, b_n) = (w_n^\top\xi_n, \|w_n\|^2)` of the sequence's own weights, i.i.d. over ``n`` and
independent of :math:`g_n` and of the table (the weights' dependence on the table is :math:`O(d^{-1/2})`,
:mod:`derive.model.softmax`). Fixed weights give the paper's law.

**The bulk** is the separable law :math:`\mathrm{MP}_\delta \boxtimes \mathrm{GMP}(\gamma, \nu)`, :math:`\nu` the law of
:math:`b`. With the deterministic equivalents :math:`(S - z)^{-1} \simeq -z^{-1}(I + \tilde e\,\Sigma)^{-1}` and
:math:`(X^\top X - z)^{-1} \simeq -z^{-1}(I + e\,D_b)^{-1}` and
:math:`J(\tilde e) = \int \frac{dH(s)}{1 + \tilde e s}`, :math:`K(e) = E\big[\frac{1}{1 + e b}\big]`,

.. math:: 1 - K(e) = \gamma\,(1 - J(\tilde e)), \qquad z = -\frac{1 - K(e)}{e\,\tilde e}, \qquad
   m_S(z) = -\frac{J(\tilde e)}{z}

(two equations in :math:`(e, \tilde e)`; :math:`J` is :math:`\mathrm{MP}_\delta`'s Stieltjes transform,
:math:`J(\tilde e) = m_H(-1/\tilde e)/\tilde e`). At ``b = kappa`` fixed it is :math:`\kappa(\mathrm{MP}_\delta
\boxtimes \mathrm{MP}_\gamma)`. Right of the support the real branch is parametrized by :math:`\tilde e \in (-1/s_+, 0)`
(:math:`s_+ = (1 + \sqrt\delta)^2`) and the right edge is :math:`\min z(\tilde e)`.

**The signal outlier** of the rank-one perturbation :math:`m a^\top/\sqrt N` (Benaych-Georges and Nadakuditi's
rectangular determinant; the cross terms vanish because :math:`g_n` is independent of :math:`a_n` and symmetric):

.. math:: (\mu_2 + \delta)\,\Phi(\lambda) = 1, \qquad \Phi = \frac{J(\tilde e)}{\lambda}\;
   E\Big[\frac{a^2}{1 + e(\lambda)\,b}\Big], \qquad E[a^2 \mid b] = E[w^\top R w \mid \|w\|^2],

and :math:`|\hat u^\top u|^2 = \frac{\mu_2}{\mu_2+\delta}\cdot\frac{-J(\tilde e)/\lambda}{(\mu_2+\delta)\Phi'(\lambda)}`.
The joint law of :math:`(w^\top R w, \|w\|^2)` enters, not :math:`\alpha` and :math:`\kappa` alone. The threshold is
:math:`\mu_2^{(N)} = 1/\Phi(\lambda_+) - \delta`. The raw ``S``'s vocabulary mean solves the same with :math:`a^2 \to 1`,
strength :math:`\delta`. The population level (``N = oo``) depends on :math:`\alpha = E[a^2]`, :math:`\kappa = E[b]`
only: it is the fixed-weight law at those scalars.

The expectations over the weights run over ``n`` draws of their limit law (:func:`derive.model.softmax.limit_weights`,
seeded: the same draws for every ``tau``); every result is also computed on :data:`BATCHES` disjoint batches, and its
``error`` is three standard errors of their mean.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from derive.errors import ParameterError

__all__ = ["BATCHES", "DRAWS", "SEED", "mp_J", "WeightSample", "weight_sample", "RandomWeightLaw", "Spike",
           "random_weight_law"]

DRAWS = 1 << 15
"""Draws of the weights' limit law behind every expectation over the weights."""

SEED = 20260521
"""The seed of those draws (fixed: the same scores, scaled by ``tau``, for every ``tau``)."""

BATCHES = 8
"""Disjoint batches of the draws whose spread gives each result's error."""


def mp_J(et, delta: float, derivative: bool = False):
    r""":math:`J(\tilde e) = \int dH(s)/(1 + \tilde e s)` for :math:`H = \mathrm{MP}_\delta` (unit mean; an atom
    :math:`1 - 1/\delta` at 0 when :math:`\delta > 1`), and :math:`J'` if ``derivative``, at real
    :math:`\tilde e \in (-1/s_+, 0]` or complex :math:`\tilde e` with :math:`\mathrm{Im}\,\tilde e > 0`: with
    :math:`\zeta = -1/\tilde e`, :math:`J = m_H(\zeta)/\tilde e` and :math:`\delta\zeta m_H^2 + (\zeta - 1 + \delta) m_H
    + 1 = 0`, the root that is a Stieltjes transform (the larger one right of the support, else the one with
    :math:`\mathrm{Im}\,m_H > 0`).

    >>> round(float(mp_J(-1e-6, 0.5)), 6), round(float(mp_J(-0.1, 0.0 + 1e-12)), 6)   # 1 - e~ and 1/(1 + e~)
    (1.000001, 1.111111)
    """
    et = np.asarray(et)
    zeta = -1 / et
    b = zeta - 1 + delta
    root = np.sqrt(b * b - 4 * delta * zeta + 0j)
    # the two roots without cancellation: q = -(b + root)/2 with root's sign making |q| large; m1 m2 = 1/(delta zeta)
    root = np.where(np.real(np.conj(b) * root) >= 0, root, -root)
    q = -(b + root) / 2
    m1, m2 = q / (delta * zeta), 1 / q
    if np.iscomplexobj(et) and np.any(np.imag(et) != 0):
        m = np.where(np.imag(m1) > 0, m1, m2)
    else:
        m = np.where(np.real(m1) > np.real(m2), m1, m2).real
    J = m / et
    if not derivative:
        return J
    dm = -(delta * m * m + m) / (2 * delta * zeta * m + b)  # dm_H/dzeta
    return J, -m / et ** 2 + dm / et ** 3


@dataclass(frozen=True)
class WeightSample:
    """Draws of a sequence's pair :math:`(a^2, b) = (w^\\top R w, \\|w\\|^2)` from the weights' limit law (``a2`` is the
    conditional mean of :math:`(w^\\top\\xi)^2` given ``w``)."""

    a2: np.ndarray
    b: np.ndarray

    def batches(self, k: int = BATCHES) -> list["WeightSample"]:
        return [WeightSample(a, b) for a, b in zip(np.array_split(self.a2, k), np.array_split(self.b, k))]


def weight_sample(T: int, tau: float, mask: str, R, draws: int = DRAWS, seed: int = SEED) -> WeightSample:
    """:class:`WeightSample` of ``draws`` sequences (:func:`derive.model.softmax.limit_weights`), ``R`` the ``T x T``
    correlation of the signs (floats)."""
    from derive.model.softmax import limit_weights

    w = limit_weights(np.random.default_rng(seed), draws, T, tau, mask)
    R = np.asarray(R, dtype=np.float64)
    return WeightSample(np.einsum("ns,st,nt->n", w, R, w), np.einsum("ns,ns->n", w, w))


@dataclass(frozen=True)
class Spike:
    """One level's outlier: whether it exists, its eigenvalue (``None`` if not), its overlap with ``u`` and the smallest
    ``mu2`` at which it exists, each with an ``error`` (``None`` where exact)."""

    outlier: bool
    eigenvalue: float | None
    overlap: float
    mu2_critical: float
    errors: dict | None = None


class _Law:
    """The real branch right of the support, for one sample of the weights (equal masses)."""

    def __init__(self, delta: float, gamma: float, sample: WeightSample):
        self.delta, self.gamma, self.a2, self.b = delta, gamma, sample.a2, sample.b
        self.et_low = -1 / (1 + math.sqrt(delta)) ** 2
        self.edge_et, self.edge = self._edge()

    def K(self, e):
        return np.mean(1 / (1 + e * self.b))

    def e_of(self, et):
        """The root ``e`` in ``(-1/max b, 0)`` of :math:`K(e) = 1 - \\gamma(1 - J(\\tilde e))` (``K`` decreases)."""
        target = 1 - self.gamma * (1 - float(mp_J(et, self.delta)))
        lo, hi = -1 / self.b.max(), 0.0
        # from the last root (the callers move e~ a little at a time), else from K ~ 1 - e E[b] near 0
        e = getattr(self, "_last_e", None) or -(target - 1) / float(np.mean(self.b))
        e = min(max(e, lo * (1 - 1e-12)), -1e-300)
        for _ in range(200):
            q = 1 / (1 + e * self.b)
            f, fp = np.mean(q) - target, -np.mean(self.b * q * q)
            if f == 0:
                break
            if f > 0:
                lo = e
            else:
                hi = e
            new = e - f / fp
            e = new if lo < new < hi else (lo + hi) / 2
            if hi - lo < 1e-15 * abs(e) or abs(f) < 1e-15 * target:
                break
        self._last_e = e
        return e

    def z_of(self, et):
        e = self.e_of(et)
        return -(1 - self.K(e)) / (e * et), e

    def _edge(self):
        r"""The right edge: the minimum of :math:`z(\tilde e)` over :math:`(-1/s_+, 0)`, bracketed on a grid of
        :math:`\log(-\tilde e)` and located as the root of :math:`dz/d\tilde e` (the minimum is flat: comparing values
        would place its argument to the square root of the rounding only) by the Illinois method."""
        # below e~ ~ 1e-6 s_+^{-1}, 1 - J(e~) ~ e~ loses digits to rounding; the edge is far from there
        lo, hi = math.log(-self.et_low * (1 - 1e-12)), math.log(-self.et_low) - 14
        f = lambda t: self.z_of(-math.exp(t))[0]  # noqa: E731
        grid = np.linspace(hi, lo, 29)
        i = int(np.argmin([f(t) for t in grid]))
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        fa, fb = self._slope(-math.exp(a)), self._slope(-math.exp(b))
        if fa * fb < 0:
            side = 0
            for _ in range(100):
                c = (a * fb - b * fa) / (fb - fa)
                fc = self._slope(-math.exp(c))
                if fc * fb < 0:
                    a, fa = b, fb
                    side_new = 1
                else:
                    fa = fa / 2 if side == -1 else fa  # Illinois: halve the stale end
                    side_new = -1
                b, fb, side = c, fc, side_new
                if abs(b - a) < 1e-13 or fc == 0:
                    break
            t = b
        else:
            t = grid[i]
        return -math.exp(t), f(t)

    def _slope(self, et):
        r""":math:`dz/d\tilde e` on the real branch: with :math:`e' = \gamma J'(\tilde e)/K'(e)`,
        :math:`z' = [K'e' e\tilde e + (1 - K)(e'\tilde e + e)]/(e\tilde e)^2`."""
        e = self.e_of(et)
        _, dJ = mp_J(et, self.delta, derivative=True)
        q = 1 / (1 + e * self.b)
        K, dK = float(np.mean(q)), -float(np.mean(self.b * q * q))
        de = self.gamma * float(dJ) / dK
        return (dK * de * e * et + (1 - K) * (de * et + e)) / (e * et) ** 2

    def phi(self, et, coefficient):
        """:math:`\\Phi(\\tilde e) = J(\\tilde e)\\,E[c/(1 + e b)]/z` and :math:`z` for the squared coefficient ``c``
        (``a2`` for the signal, 1 for the mean)."""
        z, e = self.z_of(et)
        return float(mp_J(et, self.delta)) * float(np.mean(coefficient / (1 + e * self.b))) / z, z

    def spike(self, strength: float, coefficient, cos2: float) -> tuple:
        """``(outlier, eigenvalue, overlap, threshold strength)`` of a spike ``strength * Phi = 1``."""
        phi_edge, _ = self.phi(self.edge_et, coefficient)
        threshold = 1 / phi_edge
        if strength <= threshold:
            return False, None, 0.0, threshold
        # Phi decreases from the edge (e~ = edge_et) to 0 (e~ -> 0): bisect in log(-e~)
        lo, hi = math.log(-self.edge_et), math.log(-self.edge_et) - 30
        for _ in range(200):
            mid = (lo + hi) / 2
            if strength * self.phi(-math.exp(mid), coefficient)[0] > 1:
                lo = mid
            else:
                hi = mid
            if abs(hi - lo) < 1e-11:
                break
        et = -math.exp((lo + hi) / 2)
        value, z = self.phi(et, coefficient)
        h = 1e-6 * abs(et)
        (p1, z1), (p2, z2) = self.phi(et - h, coefficient), self.phi(et + h, coefficient)
        dphi_dz = (p1 - p2) / (z1 - z2)
        f = float(mp_J(et, self.delta)) / z
        overlap = cos2 * (-f / (strength * dphi_dz))
        return True, z, min(max(overlap, 0.0), 1.0), threshold

    def stieltjes(self, z: complex, start=None):
        """:math:`m_S(z)` at ``Im z > 0`` (and the pair ``(e, e~)`` found), by Newton on
        :math:`\\tilde e + K'`-form from ``start`` (a pair) or the large-``|z|`` one."""
        e, et = start if start is not None else (-self.gamma / z, -float(np.mean(self.b)) / z)
        for _ in range(100):
            J, dJ = mp_J(et, self.delta, derivative=True)
            q = 1 / (1 + e * self.b)
            K, dK = np.mean(q), -np.mean(self.b * q * q)
            # F1 = 1 - K(e) - gamma (1 - J(e~)) = 0, F2 = z e e~ + 1 - K(e) = 0
            F1, F2 = 1 - K - self.gamma * (1 - J), z * e * et + 1 - K
            a11, a12, a21, a22 = -dK, self.gamma * dJ, z * et - dK, z * e
            det = a11 * a22 - a12 * a21
            de, det_ = (F1 * a22 - F2 * a12) / det, (a11 * F2 - a21 * F1) / det
            e, et = e - de, et - det_
            if abs(de) + abs(det_) < 1e-14 * (abs(e) + abs(et)):
                break
        return -complex(mp_J(et, self.delta)) / z, (e, et)


@dataclass(frozen=True)
class RandomWeightLaw:
    """The Gaussian-equivalent law of one model with random weights (:func:`random_weight_law`): the right edge of the
    bulk, the sample level of the signal and of the raw ``S``'s mean, and the density, each from :data:`DRAWS` draws of
    the weights with errors from :data:`BATCHES` batches."""

    delta: float
    gamma: float
    sample: WeightSample
    law: _Law
    parts: tuple
    means: tuple | None = None
    r"""The exact :math:`(\alpha, \kappa)` of the weights' law, if known: each result then subtracts the fixed-weight
    law's value at the draws' own means and adds it at the exact ones (a control variate: the draws' error in their
    means cancels)."""

    def _fixed(self, law: _Law) -> _Law | None:
        """The fixed-weight law at ``law``'s sample means (``None`` without :attr:`means`)."""
        if self.means is None:
            return None
        return _constant(self.delta, self.gamma, float(np.mean(law.a2)), float(np.mean(law.b)))

    def threshold(self) -> tuple:
        """``(mu2_critical, its error)`` of the sample-level signal outlier, without locating it."""
        (value,), (error,) = self._controlled(lambda law: (law.phi(law.edge_et, law.a2)[0],))
        # mu2_c = 1/Phi(edge) - delta; the error of 1/Phi from that of Phi
        return max(0.0, 1 / value - self.delta), (error / value ** 2 if 1 / value > self.delta else 0.0)

    def _controlled(self, quantity):
        """``quantity(law)`` (a tuple of reals, ``None`` where undefined) on every set of draws, corrected by the control
        variate; the value of all draws and, for each entry, three standard errors over the batches."""
        exact = None if self.means is None else quantity(_constant(self.delta, self.gamma, *self.means))

        def one(law):
            value = quantity(law)
            if exact is None:
                return value
            at_means = quantity(self._fixed(law))
            return tuple(None if None in (v, c, x) else v - c + x for v, c, x in zip(value, at_means, exact))

        full, parts = one(self.law), [one(p) for p in self.parts]
        errors = []
        for i in range(len(full)):
            values = [p[i] for p in parts]
            errors.append(None if None in values else 3 * float(np.std(values, ddof=1)) / math.sqrt(len(values)))
        return full, errors

    @property
    def right_edge(self) -> tuple:
        """``(right edge of the bulk, its error)``."""
        (edge,), (error,) = self._controlled(lambda law: (law.edge,))
        return edge, error

    def signal(self, mu2: float) -> Spike:
        """The sample-level signal outlier at ``mu2``."""
        cos2 = mu2 / (mu2 + self.delta)

        def quantity(law):
            exists, eigenvalue, overlap, threshold = law.spike(mu2 + self.delta, law.a2, cos2)
            return (eigenvalue, overlap if exists else None, threshold)

        (eigenvalue, overlap, threshold), errors = self._controlled(quantity)
        exists = bool(threshold < mu2 + self.delta)
        mu2c = max(0.0, float(threshold) - self.delta)
        return Spike(exists, None if not exists else float(eigenvalue), overlap if exists and overlap is not None else 0.0, mu2c,
                     {"mu2_critical": errors[2] if threshold > self.delta else 0.0,
                      "overlap": errors[1] if exists else None, "eigenvalue": errors[0] if exists else None})

    def mean(self) -> tuple:
        """The raw ``S``'s vocabulary-mean outlier (strength ``delta``, ``W_n = 1``): ``(exists, eigenvalue)``."""
        out = self.law.spike(self.delta, 1.0, 0.0)
        return out[0], out[1]

    def density(self, xs) -> tuple:
        """The bulk's density at the points ``xs`` (``Im m(x + i eta)/pi`` at ``eta = 1e-9 (1 + x)``, followed down from
        ``Im z = 1``) and the error of each (the control variate and batches of :meth:`_controlled`)."""
        xs = [float(x) for x in xs]
        return self._controlled(lambda law: tuple(_density(law, xs)))


def _constant(delta: float, gamma: float, a2: float, b: float) -> _Law:
    """The fixed-weight law (every sequence ``a^2 = a2``, ``b``), as :class:`_Law` computes it."""
    return _Law(delta, gamma, WeightSample(np.full(2, a2), np.full(2, b)))


def _density(law: _Law, xs) -> list:
    out = []
    for x in xs:
        x = float(x)
        start = None
        for eta in np.geomspace(1.0, 1e-9 * (1 + abs(x)), 40):
            m, start = law.stieltjes(complex(x, eta), start)
        out.append(max(0.0, m.imag / math.pi))
    return out


def random_weight_law(delta, gamma, sample: WeightSample, means=None) -> RandomWeightLaw:
    r"""The law of the model with weights drawn as ``sample``, at ``delta, gamma > 0``; ``means``: the exact
    :math:`(\alpha, \kappa)` of the weights' law, for the control variate of :class:`RandomWeightLaw`."""
    delta, gamma = float(delta), float(gamma)
    if not (delta > 0 and gamma > 0):
        raise ParameterError("gamma", f"the sample level needs delta, gamma > 0, got {delta}, {gamma}")
    return RandomWeightLaw(delta, gamma, sample, _Law(delta, gamma, sample),
                           tuple(_Law(delta, gamma, s) for s in sample.batches()),
                           None if means is None else tuple(float(x) for x in means))


_LAWS: dict = {}


def pooling_law(delta, gamma, pooling) -> RandomWeightLaw:
    """:func:`random_weight_law` of a resolved pooling with random weights (:class:`derive.model.pooling.Pooling` with a
    ``law``, and a sign family), kept per model in this process."""
    from fractions import Fraction

    law = pooling.law
    R = tuple(tuple(float(x) for x in row) for row in pooling.R.tolist())
    key = (Fraction(delta), Fraction(gamma), law.T, law.tau, law.mask, R)
    if key not in _LAWS:
        _LAWS[key] = random_weight_law(delta, gamma, weight_sample(law.T, float(law.tau), law.mask, R),
                                       (float(pooling.alpha), float(pooling.kappa)))
    return _LAWS[key]


def outliers(delta, gamma, pooling, mu2, centered: bool):
    """The :class:`derive.gaussian.outliers.Outliers` of a model with random weights at the current mpmath precision:
    the population level (and the population's other outliers) of the fixed-weight law at :math:`\\alpha = E[w^\\top R
    w]`, :math:`\\kappa = E\\|w\\|^2` (exact in the limit: the population covariance depends on those alone), the
    sample level, the bulk's right edge and the raw ``S``'s sample-level mean outlier of :func:`pooling_law` (its
    ``errors``: three standard errors over :data:`BATCHES` batches of the weights' draws)."""
    import mpmath

    from derive.gaussian.outliers import MEAN_CAUSE, Level, OtherOutlier, Outliers, outliers_at
    from derive.model.spec import exact_or_close

    fixed = outliers_at(delta, gamma, exact_or_close(pooling.alpha, "alpha"), exact_or_close(pooling.kappa, "kappa"),
                        mu2, sum_w=1, centered=centered)
    law = pooling_law(delta, gamma, pooling)
    s = law.signal(float(mu2))
    real = lambda x: None if x is None else mpmath.mpf(float(x))  # noqa: E731
    sample = Level(s.outlier, real(s.eigenvalue), real(s.overlap), real(s.mu2_critical), None,
                   errors=tuple((k, real(v)) for k, v in s.errors.items()))
    other = [x for x in fixed.other_outliers if x.level == "population"]
    if not centered:
        exists, eigenvalue = law.mean()
        if exists:
            other.insert(0, OtherOutlier(MEAN_CAUSE, "sample", real(eigenvalue), mpmath.mpf(0)))
    return Outliers(fixed.population, sample, real(law.right_edge[0]), fixed.population_right_edge, tuple(other))
