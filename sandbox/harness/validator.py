"""The DATA-profile validator: an `ast` check of a data snippet before anything of it runs.

Entry points:
  validate_data_code(source: str) -> list[Finding]   pure; never raises on bad input
  strip_main_guard(tree: ast.Module) -> ast.Module    unwraps a top-level `if __name__ == "__main__":`
  prepare_data_code(source) -> (tree | None, findings) what the harness compiles and runs

A finding is {code, line, message}. Codes are a fixed vocabulary (FINDING_CODES, documented in
README.md); findings are sorted by line and deduplicated. Messages are built only from the
constants of validator_tables.py (the limits, the fixed lists and the finding vocabulary, in a
module of their own that preload.py reads too): a name appears in a message only when it is a
member of one of those lists, never an identifier, module name or literal taken from the snippet.
File, URL and network findings all carry exactly FILE_MESSAGE.

The validator is the first of three layers (validator, audit-hook guard, kernel). It refuses what
the guard cannot see (os.stat, os.environ reads, function.__globals__, imports of modules already
loaded, numpy's __array_interface__ raw memory access), and the data rules the guard does not know
(literal-data caps, a top-level df).
"""

import ast
from typing import NamedTuple

from validator_tables import (  # noqa: F401  (the tables, also read through this module)
    MAX_CODE_CHARS, MAX_DATA_CODE_CHARS, MAX_STRING_CHARS, MAX_LITERALS_PER_CONTAINER,
    MAX_LITERALS_PER_FILE, FILE_MESSAGE, STDLIB_MODULES, NUMPY_MODULES, PANDAS_MODULES,
    SCIPY_MODULES, DATA_MODULES, SUBMODULE_ONLY_ROOTS, FILE_MODULES, NETWORK_MODULES, BANNED_NAMES,
    BANNED_ATTRIBUTES, BANNED_ATTRIBUTE_PREFIXES, MODULE_ESCAPES, ESCAPE_ATTRIBUTES, IO_ATTRIBUTES,
    IO_PATTERN, NETWORK_ATTRIBUTES, DISPATCH_METHODS, OS_THEME_VARIABLE, DUNDER_NAME, DUNDER_TEXT,
    URL_TEXT, FINDING_CODES, BANNED_STATEMENTS,
)


class Finding(NamedTuple):
    code: str
    line: int      # 1-based line of the snippet; 0 when the finding concerns the whole file
    message: str

    def to_dict(self):
        return {"code": self.code, "line": self.line, "message": self.message}


_NAMED = BANNED_NAMES | BANNED_ATTRIBUTES | frozenset(BANNED_STATEMENTS.values())


def _finding(code, line, **params):
    """Builds a finding whose message comes only from FINDING_CODES; a `name` parameter must be
    a member of one of the fixed lists (never an identifier taken from the snippet)."""
    name = params.get("name")
    if name is not None and name not in _NAMED:
        raise ValueError("message parameter outside the fixed vocabulary")
    return Finding(code, int(line or 0), FINDING_CODES[code].format(**params))


# --- the main-guard pre-step ------------------------------------------------------------------

def _is_main_test(test):
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    left, right = test.left, test.comparators[0]

    def is_name(n):
        return isinstance(n, ast.Name) and n.id == "__name__"

    def is_main(n):
        return isinstance(n, ast.Constant) and n.value == "__main__"

    return (is_name(left) and is_main(right)) or (is_main(left) and is_name(right))


def strip_main_guard(tree):
    """Replaces each top-level `if __name__ == "__main__":` by its body (the else branch is
    dropped: the snippet runs as __main__). Line numbers are kept, so findings and error lines
    still point into the user's snippet."""
    body = []
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and _is_main_test(stmt.test):
            body.extend(stmt.body)
        else:
            body.append(stmt)
    tree.body = body
    return tree


# --- attribute-name rules shared by attributes, from-imports, getattr and string dispatch ------

def _attribute_finding(name, line):
    """The finding for using `name` as an attribute (or None when it is allowed)."""
    if DUNDER_NAME.match(name):
        return _finding("dunder", line)
    if name.startswith("_"):
        return _finding("private-attribute", line)
    if name in ESCAPE_ATTRIBUTES:
        return _finding("escape-attribute", line)
    if name in IO_ATTRIBUTES or IO_PATTERN.match(name):
        return _finding("file-access", line)
    if name in NETWORK_ATTRIBUTES:
        return _finding("network-access", line)
    if name in BANNED_ATTRIBUTES:
        return _finding("banned-attribute", line, name=name)
    if name in MODULE_ESCAPES or name.startswith(BANNED_ATTRIBUTE_PREFIXES):
        return _finding("module-escape", line)
    return None


def _name_banned(name):
    return name in BANNED_NAMES


# --- literal-data counting --------------------------------------------------------------------

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _is_literal_leaf(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return False
    return isinstance(value, (int, float, complex, str, bytes))


def _repeat_count(node):
    """n for `<container> * n` / `n * <container>` with an int literal n, else None."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
        return None
    for count, other in ((node.right, node.left), (node.left, node.right)):
        if (isinstance(count, ast.Constant) and type(count.value) is int
                and (isinstance(other, _CONTAINERS) or _repeat_count(other) is not None)):
            return max(count.value, 0), other
    return None


def _count_literals(node, seen):
    """Literal leaves of a container expression (dict keys excluded, repetitions multiplied);
    marks the nested containers it counted in `seen`."""
    seen.add(id(node))
    rep = _repeat_count(node)
    if rep is not None:
        times, inner = rep
        return times * _count_literals(inner, seen)
    if isinstance(node, ast.Dict):
        elements = node.values
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        elements = node.elts
    else:
        return 1 if _is_literal_leaf(node) else 0
    total = 0
    for element in elements:
        if isinstance(element, ast.Starred):
            element = element.value
        if isinstance(element, _CONTAINERS) or _repeat_count(element) is not None:
            total += _count_literals(element, seen)
        elif _is_literal_leaf(element):
            total += 1
    return total


# --- the walk -----------------------------------------------------------------------------------

class _DataChecker(ast.NodeVisitor):
    def __init__(self):
        self.findings = []
        self.module_aliases = {}     # local name -> module it is bound to (imports anywhere)
        self.os_aliases = set()
        self.os_ok_nodes = set()      # ids of Name nodes inside an allowed os pattern
        self.index_tuples = set()     # ids of tuples that are a subscript's index
        self.counted = set()          # ids of containers already counted in an outer one
        self.file_literals = 0
        self.file_cap_reported = False
        self.docstrings = set()       # ids of docstring constants (exempt from the length cap)

    def add(self, finding):
        if finding is not None:
            self.findings.append(finding)

    # imports
    def _bind(self, alias_node, bound_name, module):
        if DUNDER_NAME.match(bound_name):
            self.add(_finding("dunder", alias_node.lineno))
        self.module_aliases[bound_name] = module

    def visit_Import(self, node):
        for alias in node.names:
            name = alias.name
            if name == "os":
                bound = alias.asname or "os"
                self.os_aliases.add(bound)
                self._bind(node, bound, "os")
                continue
            if name not in DATA_MODULES:
                self.add(self._import_finding(name, node.lineno))
                continue
            if alias.asname:
                self._bind(node, alias.asname, name)
            else:
                root = name.split(".")[0]
                self._bind(node, root, root)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        line = node.lineno
        if node.level:
            self.add(_finding("relative-import", line))
            return
        module = node.module or ""
        if any(a.name == "*" for a in node.names):
            self.add(_finding("star-import", line))
            return
        if module == "os" or module.startswith("os."):
            self.add(_finding("os-use", line))
            return
        root = module.split(".")[0]
        for alias in node.names:
            full = module + "." + alias.name
            bound = alias.asname or alias.name
            if full in DATA_MODULES:
                self._bind(node, bound, full)
                continue
            if module not in DATA_MODULES:
                self.add(self._import_finding(full if root in SUBMODULE_ONLY_ROOTS else module, line))
                continue
            self.add(_attribute_finding(alias.name, line))
            if DUNDER_NAME.match(bound):
                self.add(_finding("dunder", line))

    @staticmethod
    def _import_finding(name, line):
        parts = name.split(".")
        prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if prefixes & NETWORK_MODULES:
            return _finding("network-access", line)
        if prefixes & FILE_MODULES:
            return _finding("file-access", line)
        return _finding("banned-import", line)

    # statements
    def generic_visit(self, node):
        kind = BANNED_STATEMENTS.get(type(node))
        if kind is not None:
            self.add(_finding("banned-statement", node.lineno, name=kind))
        super().generic_visit(node)

    def _check_target(self, target):
        """Assignments and deletions rooted at an imported module (np.random.seed = ...)."""
        node = target
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self._check_target(element)
            return
        if isinstance(node, ast.Starred):
            self._check_target(node.value)
            return
        if not isinstance(node, (ast.Attribute, ast.Subscript)):
            return
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.module_aliases:
            self.add(_finding("module-assign", target.lineno))

    def visit_Assign(self, node):
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_For(self, node):
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_withitem(self, node):
        if node.optional_vars is not None:
            self._check_target(node.optional_vars)
        self.generic_visit(node)

    # names
    def visit_Name(self, node):
        name = node.id
        if name in self.os_aliases and id(node) not in self.os_ok_nodes:
            self.add(_finding("os-use", node.lineno))
        elif name == "open":
            self.add(_finding("file-access", node.lineno))
        elif _name_banned(name):
            self.add(_finding("banned-name", node.lineno, name=name))
        elif DUNDER_NAME.match(name):
            self.add(_finding("dunder", node.lineno))

    def visit_arg(self, node):
        if DUNDER_NAME.match(node.arg):
            self.add(_finding("dunder", node.lineno))
        self.generic_visit(node)

    def visit_keyword(self, node):
        if node.arg is not None and DUNDER_NAME.match(node.arg):
            self.add(_finding("dunder", node.value.lineno))
        self.generic_visit(node)

    def _check_bound_names(self, node, names):
        for name in names:
            if name and DUNDER_NAME.match(name):
                self.add(_finding("dunder", node.lineno))

    def visit_FunctionDef(self, node):
        self._check_bound_names(node, [node.name])
        self.generic_visit(node)

    def visit_ExceptHandler(self, node):
        self._check_bound_names(node, [node.name])
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        self._check_bound_names(node, [node.name])
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        self._check_bound_names(node, [node.name])
        self.generic_visit(node)

    def visit_MatchMapping(self, node):
        self._check_bound_names(node, [node.rest])
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        for attr in node.kwd_attrs:
            self.add(_attribute_finding(attr, node.lineno))
        self.generic_visit(node)

    # attributes
    def visit_Attribute(self, node):
        base = node.value
        if (isinstance(base, ast.Name) and self.module_aliases.get(base.id) in SUBMODULE_ONLY_ROOTS
                and base.id not in self.os_aliases):
            full = self.module_aliases[base.id] + "." + node.attr
            if full not in DATA_MODULES:
                self.add(_finding("banned-import", node.lineno))
        if not (isinstance(base, ast.Name) and id(base) in self.os_ok_nodes):
            self.add(_attribute_finding(node.attr, node.lineno))
        self.generic_visit(node)

    # calls
    def _os_pattern(self, node):
        """True for X.getenv("ANYPLOT_THEME"[, d]) / X.environ.get("ANYPLOT_THEME"[, d])."""
        func = node.func
        if not isinstance(func, ast.Attribute):
            return None
        if func.attr == "getenv" and isinstance(func.value, ast.Name):
            base = func.value
        elif (func.attr == "get" and isinstance(func.value, ast.Attribute)
              and func.value.attr == "environ" and isinstance(func.value.value, ast.Name)):
            base = func.value.value
        else:
            return None
        if base.id not in self.os_aliases:
            return None
        args = node.args
        if not (1 <= len(args) <= 2) or any(isinstance(a, ast.Starred) for a in args):
            return None
        if not (isinstance(args[0], ast.Constant) and args[0].value == OS_THEME_VARIABLE):
            return None
        if any(k.arg != "default" for k in node.keywords) or (node.keywords and len(args) == 2):
            return None
        return base

    def visit_Call(self, node):
        base = self._os_pattern(node)
        if base is not None:
            self.os_ok_nodes.add(id(base))
            # the pattern's own attributes (getenv, environ) are allowed; check the arguments only
            for arg in node.args:
                self.visit(arg)
            for kw in node.keywords:
                self.visit(kw)
            return
        func = node.func
        if isinstance(func, ast.Name) and func.id == "getattr":
            if not self._getattr_ok(node):
                self.add(_finding("banned-call", node.lineno))
            for arg in node.args:
                self.visit(arg)
            for kw in node.keywords:
                self.visit(kw)
            return
        if any(k.arg == "refcheck" for k in node.keywords):
            # ndarray.resize(..., refcheck=False) frees memory that views still point at
            self.add(_finding("banned-call", node.lineno))
        if isinstance(func, ast.Name) and func.id == "type":
            if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
                self.add(_finding("banned-call", node.lineno))
        if isinstance(func, ast.Attribute) and func.attr in DISPATCH_METHODS:
            self._check_dispatch(node)
        self.generic_visit(node)

    @staticmethod
    def _getattr_ok(node):
        if node.keywords or not (2 <= len(node.args) <= 3):
            return False
        if any(isinstance(a, ast.Starred) for a in node.args):
            return False
        name = node.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return False
        return name.value.isidentifier() and _attribute_finding(name.value, 0) is None \
            and not _name_banned(name.value)

    def _check_dispatch(self, node):
        # `map` takes a mapping of data values: only its direct string argument names a function
        nested = node.func.attr != "map"
        stack = list(node.args) + [k.value for k in node.keywords]
        while stack:
            value = stack.pop()
            if nested and isinstance(value, (ast.List, ast.Tuple, ast.Set)):
                stack.extend(value.elts)
            elif nested and isinstance(value, ast.Dict):
                stack.extend(value.values)
            elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                text = value.value
                if _name_banned(text) or _attribute_finding(text, 0) is not None:
                    self.add(_finding("string-dispatch", value.lineno))

    # literals
    def visit_Subscript(self, node):
        if isinstance(node.slice, ast.Tuple):
            self.index_tuples.add(id(node.slice))
        self.generic_visit(node)

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not isinstance(value, str):
            return
        if DUNDER_TEXT.search(value):
            self.add(_finding("dunder", node.lineno))
        if URL_TEXT.search(value):
            self.add(_finding("url-literal", node.lineno))
        if len(value) > MAX_STRING_CHARS and id(node) not in self.docstrings:
            self.add(_finding("string-length", node.lineno, limit=MAX_STRING_CHARS))

    def _container(self, node):
        if id(node) not in self.counted and id(node) not in self.index_tuples:
            count = _count_literals(node, self.counted)
            if count > MAX_LITERALS_PER_CONTAINER:
                self.add(_finding("literal-data", node.lineno, scope="one container",
                                  limit=MAX_LITERALS_PER_CONTAINER))
            self.file_literals += count
            if self.file_literals > MAX_LITERALS_PER_FILE and not self.file_cap_reported:
                self.file_cap_reported = True
                self.add(_finding("literal-data", node.lineno, scope="the whole code",
                                  limit=MAX_LITERALS_PER_FILE))
        self.generic_visit(node)

    visit_List = visit_Tuple = visit_Set = visit_Dict = _container

    def visit_BinOp(self, node):
        if id(node) not in self.counted and _repeat_count(node) is not None:
            self._container(node)
            return
        self.generic_visit(node)


# --- the top-level df requirement -------------------------------------------------------------

def _binds_df(target):
    if isinstance(target, ast.Name):
        return target.id == "df"
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds_df(t) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _binds_df(target.value)
    return False


def _assigns_df_at_top_level(statements):
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and any(_binds_df(t) for t in stmt.targets):
            return True
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and _binds_df(stmt.target) and (
                not isinstance(stmt, ast.AnnAssign) or stmt.value is not None):
            return True
        if isinstance(stmt, (ast.For, ast.While)) and (
                (isinstance(stmt, ast.For) and _binds_df(stmt.target))
                or _assigns_df_at_top_level(stmt.body) or _assigns_df_at_top_level(stmt.orelse)):
            return True
        if isinstance(stmt, ast.With) and (
                any(i.optional_vars is not None and _binds_df(i.optional_vars) for i in stmt.items)
                or _assigns_df_at_top_level(stmt.body)):
            return True
        if isinstance(stmt, ast.If) and (_assigns_df_at_top_level(stmt.body)
                                         or _assigns_df_at_top_level(stmt.orelse)):
            return True
        if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))) and any(
                _assigns_df_at_top_level(block) for block in
                (stmt.body, stmt.orelse, stmt.finalbody, *[h.body for h in stmt.handlers])):
            return True
        if isinstance(stmt, ast.Match) and any(_assigns_df_at_top_level(c.body) for c in stmt.cases):
            return True
        if isinstance(stmt, ast.Expr) and any(
                isinstance(n, ast.NamedExpr) and _binds_df(n.target) for n in ast.walk(stmt)):
            return True
    return False


def _collect_aliases(tree, checker):
    """Imports and docstrings first, so an alias is known wherever its name is used."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "os":
                    checker.os_aliases.add(alias.asname or "os")
                    checker.module_aliases[alias.asname or "os"] = "os"
                elif alias.asname:
                    checker.module_aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    checker.module_aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = node.module + "." + alias.name
                if full in DATA_MODULES:
                    checker.module_aliases[alias.asname or alias.name] = full
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                checker.docstrings.add(id(body[0].value))


# --- entry points -------------------------------------------------------------------------------

def _sorted_unique(findings):
    unique = sorted(set(findings), key=lambda f: (f.line, f.code, f.message))
    return unique


def prepare_data_code(source, max_chars=MAX_DATA_CODE_CHARS):
    """Parses, strips the main guard and validates. Returns (tree or None, findings): the tree
    is what the harness compiles, so the code that runs is the code that was checked."""
    if not isinstance(source, str):
        return None, [_finding("encoding", 0)]
    if len(source) > max_chars:
        return None, [_finding("size", 0, limit=f"{max_chars:,}")]
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return None, [_finding("encoding", 0)]
    try:
        tree = ast.parse(source, filename="snippet.py", feature_version=(3, 11))
    except SyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else 0
        return None, [_finding("syntax", line)]
    except (ValueError, RecursionError, MemoryError):
        return None, [_finding("syntax", 0)]
    strip_main_guard(tree)
    checker = _DataChecker()
    try:
        _collect_aliases(tree, checker)
        checker.visit(tree)
    except RecursionError:
        return None, [_finding("syntax", 0)]
    findings = checker.findings
    if not _assigns_df_at_top_level(tree.body):
        findings.append(_finding("df-missing", 0))
    if not findings:
        # ast.parse admits what only the compiler refuses ("df = *[1]", "return" or "break" at
        # top level): the harness compiles this very tree, so compile it here and answer such a
        # snippet as syntax rather than hand over a tree that cannot run.
        try:
            compile(tree, "snippet.py", "exec")
        except SyntaxError as exc:
            line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else 0
            findings.append(_finding("syntax", line))
        except (ValueError, RecursionError, MemoryError):
            findings.append(_finding("syntax", 0))
    findings = _sorted_unique(findings)
    return (tree if not findings else None), findings


def validate_data_code(source):
    """The DATA profile: a list of findings, empty when the snippet may run."""
    return prepare_data_code(source)[1]
