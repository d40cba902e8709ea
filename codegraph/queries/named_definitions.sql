-- API and object errors when the owner of `obj.name` cannot be resolved statically (a local
-- variable): every definition called $name, those in classes or modules the candidate's module
-- imports or defines first. $name, $module, $limit
SELECT s.qualname, s.kind, s.name,
       coalesce(s.signature, ': ' || coalesce(m.annotation, g.annotation)) AS signature,
       s.docstring, s.path, s.start_line, NULL AS import_line,
       0.9 + 0.05 * (EXISTS (SELECT 1 FROM imports i WHERE i.module = $module
                             AND (i.resolved_qualname = s.class_qualname OR i.resolved_qualname = s.module)))::INT
           + 0.05 * (s.module = $module)::INT AS score,
       'fuzzy' AS match,
       (SELECT list(p.name || ':' || p.kind ORDER BY p.position) FROM parameters p WHERE p.owner_id = s.id) AS parameters,
       coalesce(m.value, g.value) AS value
FROM symbols s
LEFT JOIN members m ON m.id = s.id
LEFT JOIN globals g ON g.id = s.id
WHERE s.name = $name AND s.kind NOT IN ('module', 'class')
ORDER BY score DESC, s.qualname
LIMIT $limit;
