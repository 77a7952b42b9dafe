"""Arrow arrays built from buffers (no pandas probe) equal what pa.array builds."""

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.io.strings import bool_array, string_array

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(deadline=None)  # the first pa.array imports pandas where installed
@given(st.lists(st.one_of(st.none(), texts), max_size=40))
def test_string_array_is_pa_array(values):
    built = string_array(values)
    built.validate(full=True)
    expected = pa.array(values, pa.string())
    assert built.type == pa.string()
    assert built.equals(expected)
    assert built.null_count == expected.null_count
    assert built.to_pylist() == values


@settings(deadline=None)
@given(st.lists(st.booleans(), max_size=70))
def test_bool_array_is_pa_array(values):
    built = bool_array(np.array(values, dtype=bool))
    built.validate(full=True)
    assert built.equals(pa.array(values, pa.bool_()))
    assert built.null_count == 0


def test_a_sliced_bool_array_filters_like_the_numpy_mask():
    table = pa.table({"x": pa.array(np.arange(10))})
    keep = (np.arange(20) % 3 == 0)[5:15]
    assert table.filter(bool_array(keep)).column("x").to_pylist() == np.arange(10)[keep].tolist()
