"""The shared estimator convention: parameters by introspection, set_params, fitted check."""

import numpy as np
import pytest

from corpus_miner.errors import NotFittedError, ParameterError
from corpus_miner.estimator import Estimator


class Toy(Estimator):
    _fit_hint = "fit(data)"

    def __init__(self, alpha=1, beta="x", weights=None):
        self.alpha = alpha
        self.beta = beta
        self.weights = weights

    def fit(self, data):
        self.total_ = sum(data) * self.alpha
        return self


def test_params_round_trip_and_set_params():
    toy = Toy(alpha=3)
    assert toy.get_params() == {"alpha": 3, "beta": "x", "weights": None}
    assert toy.set_params(beta="y") is toy and toy.beta == "y"
    with pytest.raises(ParameterError, match="no parameter 'gamma'"):
        toy.set_params(gamma=1)
    assert repr(toy) == "Toy(alpha=3, beta='y')"
    assert repr(Toy(weights=np.arange(3))).startswith("Toy(weights=array(")


def test_check_is_fitted():
    toy = Toy()
    assert not toy.is_fitted()
    with pytest.raises(NotFittedError, match=r"Toy is not fitted yet; call fit\(data\) first"):
        toy.check_is_fitted()
    toy.fit([1, 2])
    toy.check_is_fitted()
    assert toy.total_ == 3


def test_a_property_needing_the_fit_says_so_instead_of_no_attribute():
    class WithProperty(Toy):
        @property
        def doubled(self):
            self.check_is_fitted()
            return self.total_ * 2

    with pytest.raises(NotFittedError, match=r"call fit\(data\) first"):
        WithProperty().doubled  # noqa: B018
    assert WithProperty().fit([2]).doubled == 4
