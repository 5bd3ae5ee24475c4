"""The table a data snippet leaves in `df`, turned into CSV bytes under the parser's caps.

make_converter(limits) -> convert(df) -> (exit_code, measured, limit, payload, rows, columns), a
plain tuple (a Python class could have been patched by the snippet). convert runs after the
snippet, under the armed guard, so it binds what it uses before arming (classes, unbound
functions, builtins, constants); the pandas internals it calls are pandas' own code. Its decisions rest on exact types: a cell is
accepted only when its type is exactly one of CELL_TYPES, so converting it to text runs no
method the snippet defined. The byte cap is checked on the final bytes.
"""

from typing import NamedTuple

from exits import DATA_EXIT


# Each cap's variable in the job's environment.
LIMIT_VARIABLES = {"rows": "PLOTQ_DATA_MAX_ROWS", "columns": "PLOTQ_DATA_MAX_COLUMNS",
                   "bytes": "PLOTQ_DATA_MAX_CSV_BYTES", "cell_chars": "PLOTQ_DATA_MAX_CELL_CHARS"}


class TableLimits(NamedTuple):
    """The table caps. Declared once, on the host (table::Caps, which its parser reads out.csv
    again under); runs/data_job.cpp passes them into every data job's environment."""
    rows: int
    columns: int
    bytes: int         # of the CSV
    cell_chars: int    # per cell or column name

    @classmethod
    def from_env(cls, environ):
        """Each cap from its LIMIT_VARIABLES variable: a positive whole number in ASCII digits.
        A missing or bad one raises ValueError naming it: the host broke the job's contract, so
        no default stands in. Read before arming."""
        values = {}
        for field, variable in LIMIT_VARIABLES.items():
            text = environ.get(variable)
            if not (isinstance(text, str) and text.isascii() and text.isdigit()
                    and 0 < int(text) <= 1 << 40):
                raise ValueError("%s must be a positive integer" % variable)
            values[field] = int(text)
        return cls(**values)


def _getter(cls, name):
    """The descriptor's __get__ for cls.name, found along the MRO (without calling anything)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name].__get__
    raise AttributeError(name)


def make_converter(limits):
    import datetime
    import decimal
    import numpy as np
    import pandas as pd

    _type = type
    _len = len
    _str = str
    _int = int
    _list = list
    _range = range
    _issubclass = issubclass
    _object = object
    _isinstance = isinstance
    _encode = str.encode
    _append = list.append
    _set = set
    _add = set.add
    _unicode_error = UnicodeError
    _value_error = ValueError
    DataFrame = pd.DataFrame
    MultiIndex = pd.MultiIndex
    RangeIndex = pd.RangeIndex
    np_dtype = np.dtype
    columns_of = _getter(DataFrame, "columns")
    index_of = _getter(DataFrame, "index")
    reset_index = DataFrame.reset_index
    to_csv = DataFrame.to_csv
    dtypes_of = _getter(DataFrame, "dtypes")
    iloc_of = _getter(DataFrame, "iloc")
    index_tolist = pd.Index.tolist
    series_tolist = pd.Series.tolist
    to_numpy = pd.Series.to_numpy
    ndarray_tolist = np.ndarray.tolist
    range_start = _getter(RangeIndex, "start")
    range_step = _getter(RangeIndex, "step")
    index_name = _getter(pd.Index, "name")
    categorical_dtype = pd.CategoricalDtype
    categories_of = _getter(pd.CategoricalDtype, "categories")
    ok_numpy_kinds = "biufMm"
    # extension dtypes whose values are printed by pandas itself; object-like ones get their
    # cells checked (string) or their categories checked (category)
    plain_extension = (pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype,
                       pd.UInt8Dtype, pd.UInt16Dtype, pd.UInt32Dtype, pd.UInt64Dtype,
                       pd.Float32Dtype, pd.Float64Dtype, pd.BooleanDtype, pd.DatetimeTZDtype,
                       pd.PeriodDtype)
    string_dtype = pd.StringDtype
    # exact types a cell or a column name may have; their str() is C or pandas' own code
    cell_types = frozenset({
        str, int, float, bool, type(None), decimal.Decimal,
        datetime.datetime, datetime.date, datetime.time, datetime.timedelta,
        pd.Timestamp, pd.Timedelta, type(pd.NaT), type(pd.NA), pd.Period,
        np.str_, np.bool_, np.datetime64, np.timedelta64,
        np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, np.float32, np.float64, np.longdouble, np.longlong, np.ulonglong,
    })
    text_types = frozenset({str, np.str_})
    max_rows, max_columns, max_bytes, max_chars = limits
    _kind = _getter(np.dtype, "kind")
    OK = DATA_EXIT.OK
    NOT_DATAFRAME = DATA_EXIT.NOT_DATAFRAME
    MULTIINDEX_COLUMNS = DATA_EXIT.MULTIINDEX_COLUMNS
    DUPLICATE_COLUMNS = DATA_EXIT.DUPLICATE_COLUMNS
    INTERNAL = DATA_EXIT.INTERNAL
    TOO_MANY_COLUMNS = DATA_EXIT.TOO_MANY_COLUMNS
    TOO_MANY_ROWS = DATA_EXIT.TOO_MANY_ROWS
    EMPTY_TABLE = DATA_EXIT.EMPTY_TABLE
    CELL_TYPE = DATA_EXIT.CELL_TYPE
    CELL_TOO_LONG = DATA_EXIT.CELL_TOO_LONG
    TOO_LARGE = DATA_EXIT.TOO_LARGE

    def fail(code, measured=None, limit=None):
        return (code, measured, limit, b"", 0, 0)

    def cell_problem(values):
        """None when every value is an admitted cell, else (exit code, measured, limit)."""
        for value in values:
            kind = _type(value)
            if kind not in cell_types:
                return (CELL_TYPE, None, None)
            if kind in text_types:
                size = _len(value)
                if size > max_chars:
                    return (CELL_TOO_LONG, size, max_chars)
        return None

    def column_name(label):
        kind = _type(label)
        if label is None:
            return ""
        if kind not in cell_types:
            return None
        return label if kind is _str else _str(label)

    def convert(df):
        if _type(df) is not DataFrame:
            return fail(NOT_DATAFRAME)
        if _issubclass(_type(columns_of(df, DataFrame)), MultiIndex):
            return fail(MULTIINDEX_COLUMNS)
        index = index_of(df, DataFrame)
        default_index = (_type(index) is RangeIndex and range_start(index) == 0
                         and range_step(index) == 1 and index_name(index) is None)
        if not default_index:
            try:
                df = reset_index(df)
            except _value_error:
                return fail(DUPLICATE_COLUMNS)
            if _type(df) is not DataFrame:
                return fail(INTERNAL)
            if _issubclass(_type(columns_of(df, DataFrame)), MultiIndex):
                return fail(MULTIINDEX_COLUMNS)
        labels = index_tolist(columns_of(df, DataFrame))
        rows = _len(index_of(df, DataFrame))
        columns = _len(labels)
        if _type(labels) is not _list or _type(rows) is not _int:
            return fail(INTERNAL)
        if columns > max_columns:
            return fail(TOO_MANY_COLUMNS, columns, max_columns)
        if rows > max_rows:
            return fail(TOO_MANY_ROWS, rows, max_rows)
        if rows == 0 or columns == 0:
            return fail(EMPTY_TABLE)
        names = []
        seen = _set()
        for label in labels:
            name = column_name(label)
            if name is None:
                return fail(CELL_TYPE)
            if _len(name) > max_chars:
                return fail(CELL_TOO_LONG, _len(name), max_chars)
            if name in seen:
                return fail(DUPLICATE_COLUMNS)
            _add(seen, name)
            _append(names, name)
        dtypes = series_tolist(dtypes_of(df, DataFrame))
        iloc = iloc_of(df, DataFrame)
        for position in _range(columns):
            dtype = dtypes[position]
            kind = _type(dtype)
            if _isinstance(dtype, np_dtype):
                if _kind(dtype) in ok_numpy_kinds:
                    continue
                if _kind(dtype) != "O":
                    return fail(CELL_TYPE)
                values = ndarray_tolist(to_numpy(iloc[:, position], dtype=_object))
            elif kind in plain_extension:
                continue
            elif kind is string_dtype:
                values = ndarray_tolist(to_numpy(iloc[:, position], dtype=_object))
            elif kind is categorical_dtype:
                values = index_tolist(categories_of(dtype))
            else:
                return fail(CELL_TYPE)
            problem = cell_problem(values)
            if problem is not None:
                return fail(*problem)
        text = to_csv(df, None, index=False, header=names, lineterminator="\n")
        if _type(text) is not _str:
            return fail(INTERNAL)
        try:
            payload = _encode(text, "utf-8")
        except _unicode_error:
            return fail(CELL_TYPE)
        if _len(payload) > max_bytes:
            return fail(TOO_LARGE, _len(payload), max_bytes)
        return (OK, None, None, payload, rows, columns)

    return convert
