-- abstract-class-instantiated: the classes deriving from $name that can be instantiated instead,
-- nearest first, then the abstract class itself. $name: simple or qualified class name; $limit
SELECT * FROM (
    SELECT c.qualname, 'class' AS kind, c.name, '(' || array_to_string(c.bases, ', ') || ')' AS signature,
           c.docstring, c.path, c.start_line,
           CASE WHEN c.scope_qualname = c.module THEN 'from ' || c.module || ' import ' || c.name END AS import_line,
           1.0 - 0.05 * s.depth AS score, 'exact' AS match
    FROM subclasses_of($name) s JOIN classes c ON c.qualname = s.qualname
    UNION ALL
    SELECT qualname, 'class', name, '(' || array_to_string(bases, ', ') || ')', docstring, path, start_line,
           NULL, 0.5, 'exact'
    FROM classes WHERE qualname = $name OR name = $name
)
ORDER BY score DESC, qualname
LIMIT $limit;
