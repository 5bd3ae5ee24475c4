"""df -> CSV under the caps (table.make_converter), in-process and unarmed: every cap at its
boundary, the index reset, names as text, and the cell types."""

import datetime
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import DATA_CAPS, HARNESS_DIR  # noqa: E402

sys.path.insert(0, HARNESS_DIR)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from exits import DATA_EXIT  # noqa: E402
from table import LIMIT_VARIABLES, TableLimits, make_converter  # noqa: E402

LIMITS = TableLimits.from_env(DATA_CAPS)
convert = make_converter(LIMITS)


def code_of(df):
    return convert(df)[0]


class Caps(unittest.TestCase):
    def test_rows(self):
        self.assertEqual(code_of(pd.DataFrame({"a": np.zeros(20_000, dtype=int)})), DATA_EXIT.OK)
        result = convert(pd.DataFrame({"a": np.zeros(20_001, dtype=int)}))
        self.assertEqual(result[:3], (DATA_EXIT.TOO_MANY_ROWS, 20_001, 20_000))

    def test_columns(self):
        self.assertEqual(code_of(pd.DataFrame(np.zeros((2, 50)))), DATA_EXIT.OK)
        self.assertEqual(convert(pd.DataFrame(np.zeros((2, 51))))[:3],
                         (DATA_EXIT.TOO_MANY_COLUMNS, 51, 50))

    def test_columns_counted_after_the_index_reset(self):
        df = pd.DataFrame(np.zeros((2, 50)), index=pd.Index([5, 6], name="k"))
        self.assertEqual(code_of(df), DATA_EXIT.TOO_MANY_COLUMNS)

    def test_bytes(self):
        rng = np.random.default_rng(0)
        big = pd.DataFrame({"a": rng.random(20_000), "b": rng.random(20_000)})
        code, measured, limit, payload, _, _ = convert(big)
        self.assertEqual((code, limit, payload), (DATA_EXIT.TOO_LARGE, 204_800, b""))
        self.assertGreater(measured, 204_800)
        exactly = pd.DataFrame({"a": ["x" * 199] * 1023})     # header "a\n" + 1023 * 200 bytes
        code, _, _, payload, _, _ = convert(exactly)
        self.assertEqual((code, len(payload)), (DATA_EXIT.OK, 2 + 1023 * 200))
        self.assertEqual(code_of(pd.DataFrame({"a": ["x" * 199] * 1024})), DATA_EXIT.TOO_LARGE)

    def test_cell_and_name_length(self):
        self.assertEqual(code_of(pd.DataFrame({"a": ["x" * 200]})), DATA_EXIT.OK)
        self.assertEqual(convert(pd.DataFrame({"a": ["x" * 201]}))[:3],
                         (DATA_EXIT.CELL_TOO_LONG, 201, 200))
        self.assertEqual(code_of(pd.DataFrame({"n" * 201: [1]})), DATA_EXIT.CELL_TOO_LONG)
        self.assertEqual(code_of(pd.DataFrame({"c": pd.Categorical(["y" * 201])})),
                         DATA_EXIT.CELL_TOO_LONG)
        self.assertEqual(code_of(pd.DataFrame({"s": pd.array(["z" * 201], dtype="string")})),
                         DATA_EXIT.CELL_TOO_LONG)

    def test_limits_from_environment(self):
        self.assertEqual(LIMITS, TableLimits(rows=20_000, columns=50, bytes=204_800, cell_chars=200))
        limits = TableLimits.from_env(dict(DATA_CAPS, PLOTQ_DATA_MAX_ROWS="10"))
        self.assertEqual(limits, LIMITS._replace(rows=10))
        small = make_converter(limits)
        self.assertEqual(small(pd.DataFrame({"a": range(11)}))[:3], (DATA_EXIT.TOO_MANY_ROWS, 11, 10))

    def test_a_missing_or_bad_limit_is_refused_never_defaulted(self):
        for variable in LIMIT_VARIABLES.values():
            missing = {k: v for k, v in DATA_CAPS.items() if k != variable}
            with self.subTest(variable=variable, value=None):
                with self.assertRaisesRegex(ValueError, variable):
                    TableLimits.from_env(missing)
            for bad in ("", "x", "-5", "0", "+10", " 10", "10 ", "1e3", "\u0661\u0660", str((1 << 40) + 1)):
                with self.subTest(variable=variable, value=bad):
                    with self.assertRaisesRegex(ValueError, variable):
                        TableLimits.from_env(dict(DATA_CAPS, **{variable: bad}))


class Shape(unittest.TestCase):
    def test_only_an_exact_dataframe(self):
        class Sub(pd.DataFrame):
            pass
        for value in (pd.Series([1]), {"a": [1]}, np.zeros((2, 2)), None, Sub({"a": [1]})):
            with self.subTest(value=type(value).__name__):
                self.assertEqual(code_of(value), DATA_EXIT.NOT_DATAFRAME)

    def test_multiindex_columns(self):
        df = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]))
        self.assertEqual(code_of(df), DATA_EXIT.MULTIINDEX_COLUMNS)

    def test_default_index_not_written(self):
        code, _, _, payload, rows, columns = convert(pd.DataFrame({"a": [1, 2]}))
        self.assertEqual((code, payload, rows, columns), (DATA_EXIT.OK, b"a\n1\n2\n", 2, 1))

    def test_non_default_index_reset_into_columns(self):
        dates = pd.date_range("2024-01-01", periods=2, freq="D", name="date")
        payload = convert(pd.DataFrame({"v": [1.5, 2.5]}, index=dates))[3]
        self.assertEqual(payload, b"date,v\n2024-01-01,1.5\n2024-01-02,2.5\n")
        payload = convert(pd.DataFrame({"v": [1, 2]}, index=[10, 20]))[3]
        self.assertEqual(payload, b"index,v\n10,1\n20,2\n")
        shifted = pd.DataFrame({"v": [1, 2]}, index=pd.RangeIndex(1, 3))
        self.assertEqual(convert(shifted)[3], b"index,v\n1,1\n2,2\n")
        multi = pd.DataFrame({"v": [1]}, index=pd.MultiIndex.from_tuples([("a", 1)], names=["k", "n"]))
        self.assertEqual(convert(multi)[3], b"k,n,v\na,1,1\n")

    def test_index_name_collision(self):
        df = pd.DataFrame({"k": [1]}, index=pd.Index([0], name="k"))
        self.assertEqual(code_of(df), DATA_EXIT.DUPLICATE_COLUMNS)

    def test_names_as_text(self):
        self.assertEqual(convert(pd.DataFrame([[1, 2]]))[3], b"0,1\n1,2\n")
        df = pd.DataFrame([[1, 2, 3]], columns=pd.Index([None, 2.5, True], dtype=object))
        self.assertEqual(convert(df)[3], b",2.5,True\n1,2,3\n")
        self.assertEqual(code_of(pd.DataFrame([[1, 2]], columns=["a", "a"])), DATA_EXIT.DUPLICATE_COLUMNS)
        self.assertEqual(code_of(pd.DataFrame([[1, 2]], columns=[1, "1"])), DATA_EXIT.DUPLICATE_COLUMNS)
        self.assertEqual(code_of(pd.DataFrame([[1]], columns=[("a", "b")])), DATA_EXIT.CELL_TYPE)

    def test_empty(self):
        self.assertEqual(code_of(pd.DataFrame()), DATA_EXIT.EMPTY_TABLE)
        self.assertEqual(code_of(pd.DataFrame({"a": []})), DATA_EXIT.EMPTY_TABLE)


class Cells(unittest.TestCase):
    def test_admitted_cells(self):
        df = pd.DataFrame({
            "f": [1.5, np.nan], "i": [1, 2], "b": [True, False],
            "t": pd.to_datetime(["2024-01-01", None]),
            "tz": pd.date_range("2024-01-01", periods=2, freq="h", tz="Europe/Zurich"),
            "td": pd.to_timedelta([1, 2], unit="h"), "n": pd.array([1, None], dtype="Int64"),
            "s": pd.array(["x", None], dtype="string"), "c": pd.Categorical(["u", "v"]),
            "o": ["text", None], "mix": [1, "a"], "d": [datetime.date(2024, 1, 1), None],
            "p": pd.period_range("2024-01", periods=2, freq="M"),
            "np": np.array([np.float32(1.25), np.int64(3)], dtype=object),
        })
        code, _, _, payload, rows, columns = convert(df)
        self.assertEqual((code, rows, columns), (DATA_EXIT.OK, 2, 14))
        lines = payload.decode().splitlines()
        self.assertEqual(lines[0], "f,i,b,t,tz,td,n,s,c,o,mix,d,p,np")
        self.assertEqual(lines[1], "1.5,1,True,2024-01-01,2024-01-01 00:00:00+01:00,0 days 01:00:00,"
                                   "1,x,u,text,1,2024-01-01,2024-01,1.25")

    def test_refused_cells(self):
        class Custom:
            def __str__(self):
                raise AssertionError("never called")
        for values in ([[1, 2]], [{"a": 1}], [Custom()], [b"bytes"], [{1, 2}], [(1, 2)]):
            with self.subTest(values=type(values[0]).__name__):
                self.assertEqual(code_of(pd.DataFrame({"a": pd.Series(values, dtype=object)})),
                                 DATA_EXIT.CELL_TYPE)
        self.assertEqual(code_of(pd.DataFrame({"a": [1 + 2j]})), DATA_EXIT.CELL_TYPE)
        self.assertEqual(code_of(pd.DataFrame({"a": pd.arrays.IntervalArray.from_breaks([0, 1])})),
                         DATA_EXIT.CELL_TYPE)
        self.assertEqual(code_of(pd.DataFrame({"a": ["\ud800"]})), DATA_EXIT.CELL_TYPE)

    def test_str_subclass_cell_is_refused_without_calling_it(self):
        class Hostile(str):
            def __len__(self):
                raise AssertionError("never called")
        self.assertEqual(code_of(pd.DataFrame({"a": pd.Series([Hostile("x")], dtype=object)})),
                         DATA_EXIT.CELL_TYPE)
        self.assertEqual(code_of(pd.DataFrame([[1]], columns=pd.Index([Hostile("n")], dtype=object))),
                         DATA_EXIT.CELL_TYPE)


if __name__ == "__main__":
    unittest.main()
