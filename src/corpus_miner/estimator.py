"""The one estimator convention of corpus-miner (scikit-learn / Spark ML habits).

- `__init__` stores every argument as given, under the argument's own name, and does nothing else
  (no validation, no conversion): `get_params()` reads them back by introspecting the signature,
  and `set_params(**changes)` changes them.
- `fit(...)` validates the parameters (through the capability's frozen params dataclass), learns,
  and returns `self`.
- Learned state ends in `_` and exists only after fit; `check_is_fitted()` raises NotFittedError
  with a message that says what to call first.
- State that another engine or the persistence layer needs is read and written through a public
  API of the estimator (`to_state` / `from_state` or named methods), never through private
  attributes.
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from corpus_miner.errors import NotFittedError, ParameterError

E = TypeVar("E", bound="Estimator")


class Estimator:
    """Base class: parameter introspection, repr, and the fitted check."""

    # How to fit this estimator, named in NotFittedError messages ("call fit(corpus) first").
    _fit_hint = "fit()"

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [name for name, p in signature.parameters.items()
                if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor arguments, as given (scikit-learn's convention, so that
        sklearn.base.clone works). deep: also the parameters of arguments that are estimators
        themselves, as `name__param` (none of ours takes one today)."""
        params = {name: getattr(self, name) for name in self._param_names()}
        if deep:
            for name, value in list(params.items()):
                if isinstance(value, Estimator):
                    params.update({f"{name}__{key}": item
                                   for key, item in value.get_params(deep=True).items()})
        return params

    def set_params(self: E, **changes: Any) -> E:
        """Change constructor arguments; they take effect at the next fit."""
        nested: dict[str, dict[str, Any]] = {}
        for key in [key for key in changes if "__" in key]:
            owner, _, param = key.partition("__")
            nested.setdefault(owner, {})[param] = changes.pop(key)
        for owner, params in nested.items():  # `owner__param`: of an estimator argument
            value = getattr(self, owner, None) if owner in self._param_names() else None
            if not isinstance(value, Estimator):
                raise ParameterError(f"{type(self).__name__}: {owner!r} is not an estimator "
                                     f"parameter; cannot set {', '.join(sorted(params))}")
            value.set_params(**params)
        known = set(self._param_names())
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ParameterError(f"{type(self).__name__} has no parameter "
                                 f"{', '.join(map(repr, unknown))}; "
                                 f"known: {', '.join(sorted(known))}")
        for name, value in changes.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in
                    inspect.signature(type(self).__init__).parameters.items()}
        changed = []
        for name, value in self.get_params().items():
            default = defaults.get(name, inspect.Parameter.empty)
            try:
                same = default is not inspect.Parameter.empty and bool(value == default)
            except Exception:  # arrays and other values without a plain truth value
                same = False
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __getattr__(self, name: str):
        # only reached when normal lookup fails: a learned attribute asked for before fit, or a
        # property whose getter raised an AttributeError such as NotFittedError (run it again so
        # that its own message is seen, not "no attribute")
        attribute = getattr(type(self), name, None)
        if isinstance(attribute, property) and attribute.fget is not None:
            return attribute.fget(self)
        if name.endswith("_") and not name.startswith("_"):
            raise NotFittedError(f"{name} is not available: this {type(self).__name__} is not "
                                 f"fitted yet; call {self._fit_hint} first")
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def is_fitted(self) -> bool:
        """True once fit (or a loader) has set learned state: any attribute ending in `_`."""
        return any(name.endswith("_") and not name.startswith("_") for name in vars(self))

    def _forget_fitted(self) -> None:
        """Drop all learned state (a new fit starts from nothing)."""
        learned = [name for name in vars(self) if name.endswith("_") and not name.startswith("_")]
        for name in learned:
            delattr(self, name)

    def check_is_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; "
                                 f"call {self._fit_hint} first")
