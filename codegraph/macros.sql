-- Views and macros over the tables declared in codegraph/schema.py (their DDL is generated
-- from there, and so is each @@union@@ below: schema.DEFINITION). The schema version is a hash
-- of both, so editing this file rebuilds older databases instead of misreading them.

-- One row per definition of the repository: "where is X defined" is one query.
CREATE VIEW symbols AS
    @@symbols@@;

-- The same, with the library layer (the standard library and the packages the repository
-- imports, in the `library` schema) and a `layer` column: project | stdlib | site.
CREATE VIEW all_symbols AS
    @@all_symbols@@;

-- Whether a dotted module or qualified name has a private part (`httpx._config`, `_pytest.x`).
CREATE MACRO is_private(dotted) AS regexp_matches(dotted, '(^|\.)_');

-- The words of an identifier, lower case, three letters or more (`dummy_pager` and `mockPager`
-- share `pager`): how a name written in place of another is related to it when its spelling is not.
CREATE MACRO name_words(identifier) AS list_distinct(list_filter(
    string_split(lower(regexp_replace(identifier, '([a-z0-9])([A-Z])', '\1_\2', 'g')), '_'), w -> length(w) >= 3));

-- What an import can name, any layer: each module, and what it defines at its top level (classes,
-- functions, variables), with its module and `layer`.
CREATE VIEW top_level AS
    SELECT qualname, 'module' AS kind, name, qualname AS module, layer FROM all_modules
    UNION ALL
    SELECT qualname, 'class', name, module, layer FROM all_classes WHERE qualname = module || '.' || name
    UNION ALL
    SELECT qualname, kind, name, module, layer FROM all_globals;

-- pytest fixtures, any layer: module-level functions decorated with `fixture` or `pytest.fixture`
-- (with or without arguments), by the name a test asks for them with (`name=` when given). A
-- test gets one by naming it as a parameter: the project's conftest.py files and pytest's own
-- (`tmp_path`, `monkeypatch`, `pytestconfig`) included; `builtin`: one pytest itself offers every
-- test (its internal ones, named with an underscore, left out).
CREATE VIEW fixtures AS
    SELECT *, layer <> 'project' AND starts_with(module, '_pytest.') AND NOT starts_with(name, '_') AS builtin
    FROM (SELECT coalesce(nullif(regexp_extract(d, 'name\s*=\s*[''"]([^''"]+)', 1), ''), g.name) AS name,
                 g.qualname, g.module, g.path, g.start_line, g.signature, g.docstring, g.layer
          FROM all_globals g, unnest(g.decorators) AS t(d)
          WHERE regexp_matches(d, '^(pytest\.)?fixture\b'));

-- What each module's top-level imports bind, and to what (any layer): `from ._client import Client`
-- in httpx/__init__.py binds Client to httpx._client.Client; `import os.path` binds os to the
-- module os, not to os.path. A star import (`is_star`) copies the public names of `qualname`.
CREATE VIEW module_imports AS
    SELECT i.module, CASE WHEN i.is_star THEN '*' ELSE i.bound_name END AS name,
           CASE WHEN i.is_star THEN i.resolved_module
                WHEN i.name IS NULL AND i.alias IS NULL AND i.imported_module <> i.bound_name THEN i.bound_name
                ELSE i.resolved_qualname END AS qualname,
           i.target, i.is_star, f.layer, i.path, i.line
    FROM all_imports i JOIN all_files f USING (file_id)
    WHERE i.scope_qualname = i.module;

-- CodeQL-style vocabulary, stored in the file so the plain duckdb shell has it too. Every macro
-- that takes a qualified name also takes any dotted path Python can import it by (canonical).

-- The definitions a dotted path leads to, read as Python reads it: `httpx.Client` is
-- `httpx._client.Client` (httpx/__init__.py imports it), `json.JSONDecoder.decode` is
-- `json.decoder.JSONDecoder.decode`, `os.path.join` is `posixpath.join` (and `ntpath.join`):
-- through imports, star imports, aliases and base classes. A qualified name is itself; a Java
-- method named without its parameter types is each of its overloads.
CREATE MACRO canonical(dotted) AS TABLE
    WITH RECURSIVE known(found) AS (
        SELECT count(*) > 0 FROM all_symbols WHERE qualname = dotted
    ), overloads AS (  -- Java names each overload with its parameter types: `p.C.m` is `p.C.m(int)`, ...
        SELECT s.qualname FROM all_symbols s, known WHERE NOT known.found AND starts_with(s.qualname, dotted || '(')
    ), walk(qualname, rest, depth) AS (
        SELECT m.qualname, string_split(dotted, '.')[2:], 0 FROM all_modules m, known
        WHERE NOT known.found AND m.qualname = split_part(dotted, '.', 1)
          AND NOT EXISTS (SELECT 1 FROM overloads)
        UNION ALL
        SELECT step.qualname, step.rest, w.depth + 1
        FROM walk w, LATERAL (
            SELECT s.qualname, w.rest[2:] AS rest FROM all_symbols s WHERE s.qualname = w.qualname || '.' || w.rest[1]
            UNION ALL
            SELECT i.qualname, w.rest[2:] FROM module_imports i
            WHERE i.module = w.qualname AND i.name = w.rest[1] AND NOT i.is_star AND i.qualname IS NOT NULL
            UNION ALL
            SELECT i.qualname, w.rest FROM module_imports i
            WHERE i.module = w.qualname AND i.is_star AND i.qualname IS NOT NULL
            UNION ALL
            SELECT h.resolved_base, w.rest FROM all_inheritance h
            WHERE h.class_qualname = w.qualname AND h.resolved_base IS NOT NULL
        ) step
        WHERE len(w.rest) > 0 AND w.depth < 16
    )
    SELECT dotted AS qualname, 0 AS steps FROM known WHERE found
    UNION ALL
    SELECT DISTINCT qualname, 0 FROM overloads
    UNION ALL
    (SELECT DISTINCT qualname, depth FROM walk WHERE len(rest) = 0 QUALIFY depth = min(depth) OVER ());

-- Classes named cls (a simple name, or any path to it) and every class they inherit from, in method
-- resolution order: depth-first, left to right, keeping the last visit of a class seen twice
-- (which matches C3 on the usual diamonds). mro_position 0 is the class itself.
CREATE MACRO ancestors_of(cls) AS TABLE
    WITH RECURSIVE walk(start_qualname, class_qualname, depth, trail, path_key) AS (
        SELECT qualname, qualname, 0, [qualname], []::INTEGER[] FROM all_classes
        WHERE name = cls OR qualname IN (SELECT qualname FROM canonical(cls))
        UNION ALL
        SELECT w.start_qualname, i.resolved_base, w.depth + 1, list_append(w.trail, i.resolved_base),
               list_append(w.path_key, i.position)
        FROM walk w JOIN all_inheritance i ON i.class_qualname = w.class_qualname
        WHERE i.resolved_base IS NOT NULL AND NOT list_contains(w.trail, i.resolved_base) AND w.depth < 64
    )
    SELECT start_qualname, class_qualname, min(depth) AS depth,
           row_number() OVER (PARTITION BY start_qualname ORDER BY max(path_key)) - 1 AS mro_position
    FROM walk GROUP BY start_qualname, class_qualname ORDER BY start_qualname, mro_position;

-- Members of a class, inherited ones included (from library classes too); an override hides
-- what it overrides.
CREATE MACRO members_of(cls) AS TABLE
    SELECT a.start_qualname AS class, m.name, m.kind, m.signature, m.class_qualname AS defined_in,
           a.mro_position, m.qualname, m.annotation, m.value, m.docstring, m.path, m.start_line
    FROM ancestors_of(cls) a JOIN all_members m ON m.class_qualname = a.class_qualname
    -- what a nearer class defines hides the same member further up: the same name in Python, the
    -- same name and parameter types in Java (overloads are distinct), i.e. the qualname past its class
    QUALIFY row_number() OVER (PARTITION BY a.start_qualname, substr(m.qualname, length(m.class_qualname) + 2)
                               ORDER BY a.mro_position) = 1
    ORDER BY class, mro_position, m.start_line;

-- Classes deriving from cls, directly or not.
CREATE MACRO subclasses_of(cls) AS TABLE
    WITH RECURSIVE walk(class_qualname, depth, trail) AS (
        SELECT qualname, 0, [qualname] FROM all_classes WHERE name = cls OR qualname IN (SELECT qualname FROM canonical(cls))
        UNION ALL
        SELECT i.class_qualname, w.depth + 1, list_append(w.trail, i.class_qualname)
        FROM walk w JOIN inheritance i ON i.resolved_base = w.class_qualname
        WHERE NOT list_contains(w.trail, i.class_qualname) AND w.depth < 64
    )
    SELECT c.qualname, min(w.depth) AS depth, c.path, c.start_line
    FROM walk w JOIN classes c ON c.qualname = w.class_qualname
    WHERE w.depth > 0 GROUP BY ALL ORDER BY depth, c.qualname;

-- The names a module defines at top level, and the names it imports (any layer: a standard
-- library module's names too).
CREATE MACRO names_in_module(mod) AS TABLE
    SELECT s.name, s.kind, s.qualname, s.signature, s.start_line, 'defined' AS origin
    FROM all_symbols s JOIN top_level t USING (qualname)
    WHERE t.module IN (SELECT qualname FROM canonical(mod)) AND t.kind <> 'module'
    UNION ALL
    SELECT name, 'import', coalesce(qualname, target), NULL, line, 'imported'
    FROM module_imports WHERE module IN (SELECT qualname FROM canonical(mod)) AND NOT is_star;

-- Every definition of the repository (module, class, member, global, nested function) with this
-- simple name, or the one a dotted path leads to.
CREATE MACRO definitions_named(sym) AS TABLE
    SELECT kind, name, qualname, module, class_qualname, signature, path, start_line, end_line, docstring
    FROM symbols WHERE name = sym OR (contains(sym, '.') AND qualname IN (SELECT qualname FROM canonical(sym)))
    ORDER BY qualname;

-- Signature, docstring and parameter names of a qualified name or a path to it (any layer).
CREATE MACRO signature_of(qn) AS TABLE
    SELECT s.kind, s.qualname, s.signature, s.docstring, s.path, s.start_line,
           (SELECT list(p.name ORDER BY p.position) FROM all_parameters p WHERE p.owner_id = s.id) AS parameters,
           s.layer
    FROM all_symbols s WHERE s.qualname IN (SELECT qualname FROM canonical(qn));

-- Calls in the repository whose callee resolved to this qualified name, with where they are.
CREATE MACRO callers_of(qn) AS TABLE
    SELECT c.caller_qualname, c.callee_text, f.path, c.line, c.col, c.resolution
    FROM calls c JOIN files f USING (file_id) WHERE c.resolved_callee IN (SELECT qualname FROM canonical(qn))
    ORDER BY f.path, c.line;

-- What a function, class body or module calls, resolved where possible.
CREATE MACRO callees_of(qn) AS TABLE
    SELECT callee_text, resolved_callee, resolution, line, col
    FROM calls WHERE caller_qualname IN (SELECT qualname FROM canonical(qn)) ORDER BY line, col;

-- Every use of a definition in the repository: calls (`kind` as in calls: call, decorator,
-- implicit, init, property), imports, base classes, and the reads, writes and annotations of refs.
CREATE MACRO references_to(qn) AS TABLE
    WITH target AS (SELECT qualname FROM canonical(qn))
    SELECT u.kind, u.scope_qualname, f.path, u.line, u.col, u.text, u.resolution FROM (
        SELECT kind, caller_qualname AS scope_qualname, file_id, line, col, callee_text AS text, resolution
        FROM calls WHERE resolved_callee IN (FROM target)
        UNION ALL
        SELECT 'import', scope_qualname, file_id, line, NULL, coalesce(name, imported_module), resolution
        FROM imports WHERE resolved_qualname IN (FROM target)
        UNION ALL
        SELECT 'base', h.class_qualname, h.file_id, k.start_line, NULL, h.base_text, h.resolution
        FROM inheritance h JOIN classes k ON k.id = h.class_id WHERE h.resolved_base IN (FROM target)
        UNION ALL
        SELECT kind, scope_qualname, file_id, line, col, text, resolution FROM refs WHERE resolved_qualname IN (FROM target)
    ) u JOIN files f USING (file_id)
    ORDER BY f.path, u.line, u.col, u.kind;

-- The methods of subclasses (at any depth) that replace the method qn: what a call of qn on an
-- instance of a subclass runs instead.
CREATE MACRO overrides_of(qn) AS TABLE
    WITH RECURSIVE walk(class_qualname, name, depth, trail) AS (
        SELECT class_qualname, name, 0, [class_qualname] FROM all_members
        WHERE qualname IN (SELECT qualname FROM canonical(qn))
        UNION ALL
        SELECT i.class_qualname, w.name, w.depth + 1, list_append(w.trail, i.class_qualname)
        FROM walk w JOIN inheritance i ON i.resolved_base = w.class_qualname
        WHERE NOT list_contains(w.trail, i.class_qualname) AND w.depth < 64
    )
    SELECT m.qualname, m.class_qualname, min(w.depth) AS depth, m.kind, m.signature, m.path, m.start_line
    FROM walk w JOIN members m ON m.class_qualname = w.class_qualname AND m.name = w.name
    WHERE w.depth > 0
    GROUP BY ALL ORDER BY depth, m.qualname;

-- What a call of the method qn may run: qn itself and its overrides.
CREATE MACRO implementations_of(qn) AS TABLE
    SELECT qualname, class_qualname, 0 AS depth, kind, signature, path, start_line FROM all_members
    WHERE qualname IN (SELECT qualname FROM canonical(qn))
    UNION ALL
    SELECT * FROM overrides_of(qn)
    ORDER BY depth, qualname;

-- Where a name can be imported from, best first: for each definition the name can mean, the public
-- path of the package that defines it (`from httpx import Timeout`, `import warnings`), then its own
-- private module (`from httpx._config import Timeout`), then other modules that pass it on; never a
-- test module passing it on, never a spelling Python cannot import. The repository's definitions
-- first, then the standard library's, then imported packages' (`layer`: the definition's); `rank`
-- says how public a spelling is (0 the public path of the package that defines it, 2 its private
-- module, 3 and 4 modules passing it on), and `choice` 1 marks the spelling to use for each
-- definition. import_line_of answers for a dotted path.
CREATE MACRO import_candidates(sym) AS TABLE
    WITH spelled AS (
        SELECT CASE WHEN kind <> 'module' THEN 'from ' || module || ' import ' || name
                    WHEN qualname = name THEN 'import ' || name
                    ELSE 'from ' || regexp_extract(qualname, '^(.*)\.[^.]+$', 1) || ' import ' || name END AS import_line,
               qualname AS target,
               CASE WHEN kind <> 'module' THEN module ELSE coalesce(regexp_extract(qualname, '^(.*)\.[^.]+$', 1), '') END
                   AS module,
               CASE WHEN kind = 'module' THEN 'module' ELSE 'definition' END AS via
        FROM top_level WHERE name = sym
        UNION ALL
        SELECT 'from ' || module || ' import ' || name, qualname, module, 're-export'
        FROM module_imports
        WHERE name = sym AND qualname IS NOT NULL AND NOT is_star
          AND (layer = 'project' OR NOT is_private(module))
        UNION ALL  -- `from .futures import *` in asyncio/__init__.py: `from asyncio import Future`
        SELECT 'from ' || i.module || ' import ' || t.name, t.qualname, i.module, 're-export'
        FROM module_imports i JOIN top_level t ON t.module = i.qualname
        WHERE t.name = sym AND NOT starts_with(sym, '_') AND i.is_star AND t.kind <> 'module'
    ), ranked AS (
        SELECT p.import_line, p.target AS qualname, t.kind, p.module, p.via, t.layer,
               CASE WHEN p.module <> '' AND NOT regexp_full_match(p.module, '[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*')
                    THEN NULL  -- not importable by that spelling (a folder with a hyphen)
                    WHEN p.via <> 'definition'
                         AND regexp_matches(p.module, '(^|\.)(tests?|testing|conftest|test_[^.]*|[^.]*_tests?)(\.|$)')
                    THEN NULL  -- a test module passing it on
                    WHEN p.module = '' OR starts_with(p.target, p.module || '.') THEN
                         CASE WHEN is_private(p.module) THEN 2 ELSE 0 END
                    WHEN is_private(p.module) THEN 4
                    ELSE 3 END AS rank
        FROM spelled p JOIN top_level t ON t.qualname = p.target
    ), used AS (
        SELECT resolved_qualname AS qualname, count(*) AS uses FROM all_imports
        WHERE resolved_qualname IN (SELECT qualname FROM ranked) GROUP BY ALL
    )
    SELECT import_line, qualname, kind, module, via, layer, rank,
           row_number() OVER (PARTITION BY qualname ORDER BY rank, dots, length(import_line), import_line) AS choice
    FROM (SELECT r.*, coalesce(used.uses, 0) AS uses, length(r.module) - length(replace(r.module, '.', '')) AS dots
          FROM ranked r LEFT JOIN used USING (qualname) WHERE r.rank IS NOT NULL
          QUALIFY row_number() OVER (PARTITION BY r.import_line ORDER BY r.rank) = 1)
    ORDER BY CASE layer WHEN 'project' THEN 0 WHEN 'stdlib' THEN 1 ELSE 2 END, rank, uses DESC, dots,
             length(import_line), import_line;

-- How to import what a qualified name or path means, by its public path: the first line of
-- import_candidates for the top-level definition that holds it, and the dotted path that line
-- makes usable (`httpx._client.Client.send`: `from httpx import Client`, `httpx.Client.send`).
-- Java: a file's module is its top-level class, imported by its qualified name
-- (`import com.ex.util.Money;`; `Money.format(int)` then).
CREATE MACRO import_line_of(qn) AS TABLE
    WITH target AS (
        SELECT s.qualname, s.kind, ends_with(s.path, '.java') AS java,
               CASE WHEN s.kind = 'module' OR ends_with(s.path, '.java') THEN s.module
                    ELSE s.module || '.' || split_part(substr(s.qualname, length(s.module) + 2), '.', 1) END AS top
        FROM all_symbols s WHERE s.qualname IN (SELECT qualname FROM canonical(qn))
    )
    SELECT t.qualname, c.import_line,
           CASE WHEN c.module = '' THEN '' ELSE c.module || '.' END || regexp_extract(c.import_line, '[^ ]*$')
               || substr(t.qualname, length(t.top) + 1) AS public_path
    FROM target t, LATERAL (SELECT * FROM import_candidates(regexp_extract(t.top, '[^.]*$')) c WHERE c.qualname = t.top AND c.choice = 1) c
    WHERE NOT t.java
    UNION ALL
    SELECT qualname, 'import ' || top || ';', regexp_extract(top, '[^.]*$') || substr(qualname, length(top) + 1)
    FROM target WHERE java AND kind <> 'module';
