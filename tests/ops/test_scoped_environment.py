"""``ops.utils.scoped_environment``: what the self-check's forced chunks and the compile tools'
Triton switches are set with. Inside, the variables hold the values given; after, each is as it
was, unset ones unset again, on a clean exit and on an exception."""

import contextlib
import os

import pytest

from abc_fairseq.ops.utils import scoped_environment

SET, UNSET = "ABC_TEST_SCOPED_SET", "ABC_TEST_SCOPED_UNSET"


@pytest.mark.parametrize("fails", [False, True], ids=["exit", "exception"])
def test_values_hold_inside_and_are_restored_after(fails, monkeypatch):
    monkeypatch.setenv(SET, "before")
    monkeypatch.delenv(UNSET, raising=False)
    with pytest.raises(RuntimeError) if fails else contextlib.nullcontext():
        with scoped_environment(**{SET: "inside", UNSET: "16"}):
            assert (os.environ[SET], os.environ[UNSET]) == ("inside", "16")
            if fails:
                raise RuntimeError("inside the scope")
    assert os.environ[SET] == "before" and UNSET not in os.environ
