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


def _estimators():
    from corpus_miner.coverage.clean import Cleaner
    from corpus_miner.dedup import LSHBloom
    from corpus_miner.phrases.miner import BloomSpan

    found = [BloomSpan(sigma=3, min_length=4), LSHBloom(threshold=0.7, num_perm=32),
             Cleaner(mode="annotate")]
    try:
        from corpus_miner.spark import SparkBloomSpan, SparkLSHBloom
    except ImportError:  # without the spark extra
        return found
    found += [SparkBloomSpan(sigma=3, min_length=4), SparkLSHBloom(num_perm=32)]
    try:
        from corpus_miner.ray import RayLSHBloom
    except ImportError:  # without the ray extra
        return found
    return [*found, RayLSHBloom(num_perm=32, in_flight=4)]


@pytest.mark.parametrize("estimator", _estimators(), ids=lambda e: type(e).__name__)
def test_scikit_learn_clone_get_params_deep_and_pickling(estimator):
    """scikit-learn's own clone (issue 22): it calls get_params(deep=False), builds a new
    estimator from it and checks every parameter came back as the same object."""
    import pickle

    sklearn_base = pytest.importorskip("sklearn.base")
    params = estimator.get_params()
    assert estimator.get_params(deep=True) == estimator.get_params(deep=False) == params
    copy = sklearn_base.clone(estimator)
    assert type(copy) is type(estimator) and copy is not estimator
    assert repr(copy) == repr(estimator) and not copy.is_fitted()
    name = sorted(params)[0]
    assert copy.set_params(**{name: params[name]}) is copy
    again = pickle.loads(pickle.dumps(estimator))
    assert repr(again) == repr(estimator)


def test_fitted_estimators_pickle_and_clone_unfitted():
    import pickle

    sklearn_base = pytest.importorskip("sklearn.base")
    from corpus_miner.dedup import LSHBloom
    from corpus_miner.phrases.miner import BloomSpan

    texts = [f"we use cookies to improve your experience page {i}" for i in range(8)]
    model = LSHBloom(threshold=0.7, num_perm=32).fit(texts)
    restored = pickle.loads(pickle.dumps(model))
    assert restored.query(texts).is_duplicate.tolist() == model.query(texts).is_duplicate.tolist()
    assert not sklearn_base.clone(model).is_fitted()
    miner = BloomSpan(sigma=3, min_length=4)
    assert not sklearn_base.clone(miner).is_fitted()


def test_nested_parameters_in_get_and_set_params():
    inner = Toy(alpha=2)
    outer = Toy(weights=inner)
    assert outer.get_params(deep=True)["weights__alpha"] == 2
    assert "weights__alpha" not in outer.get_params(deep=False)
    outer.set_params(weights__beta="z")
    assert inner.beta == "z"
    with pytest.raises(ParameterError, match="not an estimator parameter"):
        outer.set_params(beta__x=1)
