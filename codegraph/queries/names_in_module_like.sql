-- no-name-in-module, and no-member on a module: what module $module really offers, nearest
-- $name first, then $name where it is really defined; for `pytest.X`, the fixtures named like X.
-- $module, $name, $limit
SELECT * FROM (
    SELECT s.qualname, s.kind, s.name, s.signature, s.docstring, s.path, s.start_line,
           'from ' || $module || ' import ' || s.name AS import_line,
           jaro_winkler_similarity(lower(s.name), lower($name)) AS score, 'fuzzy' AS match
    FROM all_symbols s
    WHERE s.module = $module AND s.kind IN ('class', 'function', 'variable')
      AND s.qualname = s.module || '.' || s.name
    UNION ALL
    SELECT coalesce(i.resolved_qualname, i.target), 'import', i.bound_name, NULL, NULL, i.path, i.line,
           'from ' || $module || ' import ' || i.bound_name,
           jaro_winkler_similarity(lower(i.bound_name), lower($name)), 'fuzzy'
    FROM all_imports i
    WHERE i.module = $module AND i.scope_qualname = $module AND NOT i.is_star AND NOT starts_with(i.bound_name, '_')
    UNION ALL
    -- names that arrive through `from .sub import *` (honouring the source's __all__)
    SELECT s.qualname, s.kind, s.name, s.signature, s.docstring, s.path, s.start_line,
           'from ' || $module || ' import ' || s.name,
           jaro_winkler_similarity(lower(s.name), lower($name)), 'fuzzy'
    FROM all_imports i
    JOIN all_symbols s ON s.module = i.resolved_module AND s.qualname = s.module || '.' || s.name
                  AND s.kind IN ('class', 'function', 'variable')
    JOIN all_modules src ON src.qualname = i.resolved_module
    WHERE i.module = $module AND i.scope_qualname = $module AND i.is_star
      AND (list_contains(src.all_names, s.name) OR (src.all_names IS NULL AND NOT starts_with(s.name, '_')))
    UNION ALL
    SELECT qualname, 'module', name, NULL, docstring, path, 1, 'from ' || $module || ' import ' || name,
           jaro_winkler_similarity(lower(name), lower($name)), 'fuzzy'
    FROM all_modules WHERE qualname = $module || '.' || name
    UNION ALL  -- what pytest once offered as a global is a fixture now: `pytest.config` -> pytestconfig
    SELECT qualname, 'function', name, signature, docstring, path, start_line,
           'a pytest fixture: add ' || name || ' as a parameter of the test', 0.95, 'fuzzy'
    FROM fixtures
    WHERE $module = 'pytest' AND builtin AND length($name) >= 3 AND contains(lower(name), lower($name))
    UNION ALL
    SELECT qualname, kind, name, signature, docstring, path, start_line,
           'from ' || module || ' import ' || name, 1.01, 'exact'
    FROM all_symbols
    WHERE name = $name AND kind IN ('class', 'function', 'variable') AND qualname = module || '.' || name
)
WHERE score >= 0.7
ORDER BY score DESC, length(qualname), qualname
LIMIT $limit;
