-- The lexical fallback (and get_relevant_code until the semantic layer exists): definitions
-- whose name, qualified name or docstring contain the most of the query's identifier parts.
-- $terms: lower-case parts of the query (snake_case and CamelCase split); $limit
WITH scored AS (
    SELECT s.*,
           len(list_filter($terms, t -> contains(lower(s.name), t))) * 3
         + len(list_filter($terms, t -> contains(lower(s.qualname), t)))
         + len(list_filter($terms, t -> contains(lower(coalesce(s.docstring, '')), t))) AS hits
    FROM symbols s
    WHERE s.kind <> 'module'
)
SELECT qualname, kind, name, signature, docstring, path, start_line,
       CASE WHEN class_qualname IS NULL AND kind IN ('class', 'function', 'variable')
            THEN 'from ' || module || ' import ' || name END AS import_line,
       hits / (3.0 * len($terms) + 2.0 * len($terms)) AS score, 'lexical' AS match
FROM scored
WHERE hits > 0
ORDER BY hits DESC, length(qualname), qualname
LIMIT $limit;
