"""The dependency jars a repository declares, read without running its build: the pom.xml files'
dependencies (versions from their properties, their parents' in the repository, their
dependencyManagement) and the build.gradle / build.gradle.kts files' (`implementation
'g:a:v'`, a version catalog's `libs.x`), found where Maven (the local repository) and Gradle (its
module cache) keep them. Transitive dependencies and versions from outside the repository are
not known this way: Maven's own answer (check.known_classpath) is preferred when there is one.
"""

from __future__ import annotations

import os
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from .maven import local_repository

_PROPERTY = re.compile(r"\$\{([^}]+)\}")
_COORDINATE = re.compile(r"(?!\.)[\w.+-]+")  # a groupId, artifactId, version or classifier as Maven takes it
_MAX_BUILD_FILES, _MAX_BYTES = 200, 1 << 20


def _pom(path: Path) -> ET.Element | None:
    try:
        if path.is_symlink() or path.stat().st_size > _MAX_BYTES:
            return None
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None


def _child(element: ET.Element | None, *path: str) -> ET.Element | None:
    """A child by local names, whatever the namespace (`project/dependencies`)."""
    for name in path:
        if element is None:
            return None
        element = next((c for c in element if c.tag.rpartition("}")[2] == name), None)
    return element


def _children(element: ET.Element | None, *path: str) -> list[ET.Element]:
    found = _child(element, *path)
    return list(found) if found is not None else []


def _text(element: ET.Element | None, *path: str) -> str:
    found = _child(element, *path)
    return (found.text or "").strip() if found is not None else ""


def _maven(poms: list[Path]) -> list[tuple[str, str, str, str]]:
    """(group, artifact, version, classifier) the pom.xml files declare, versions from their
    properties, their parents' in the repository and their dependencyManagement."""
    parsed = {pom: element for pom in poms if (element := _pom(pom)) is not None}

    def chain(pom: Path) -> list[ET.Element]:  # the pom, then its parents in the repository
        out, seen = [], set()
        while pom in parsed and pom not in seen:
            seen.add(pom)
            element = parsed[pom]
            out.append(element)
            relative = _text(element, "parent", "relativePath") or "../pom.xml"
            if _child(element, "parent") is None:
                break
            pom = Path(os.path.normpath(pom.parent / relative))
            pom = pom / "pom.xml" if pom.suffix != ".xml" else pom
        return out

    out = []
    for pom in parsed:
        elements = chain(pom)
        properties: dict[str, str] = {}
        managed: dict[tuple[str, str], str] = {}
        for element in reversed(elements):  # the nearest pom's values win
            version = _text(element, "version") or _text(element, "parent", "version")
            properties.update({"project.version": version, "version": version})
            for prop in _children(element, "properties"):
                properties[prop.tag.rpartition("}")[2]] = (prop.text or "").strip()
            for dep in _children(element, "dependencyManagement", "dependencies"):
                managed[(_text(dep, "groupId"), _text(dep, "artifactId"))] = _text(dep, "version")

        def value(text: str) -> str:
            for _ in range(8):  # properties that name properties, a few levels deep
                text = _PROPERTY.sub(lambda m: properties.get(m.group(1), m.group(0)), text)
            return text

        for dep in _children(elements[0], "dependencies"):
            group, artifact = value(_text(dep, "groupId")), value(_text(dep, "artifactId"))
            version = value(_text(dep, "version") or managed.get((_text(dep, "groupId"), _text(dep, "artifactId")), ""))
            out.append((group, artifact, version, value(_text(dep, "classifier"))))
    return out


# `implementation 'g:a:v'`, `api("g:a:v")`, `testImplementation group: ...` is not read (rare)
_GRADLE = re.compile(r"""\b(?:implementation|api|compileOnly|runtimeOnly|compile|testImplementation|testCompile|"""
                     r"""testCompileOnly|testRuntimeOnly|annotationProcessor)\s*\(?\s*["']([^"':\s]+):([^"':\s]+):"""
                     r"""([^"':\s@]+)(?::([^"':\s@]+))?["']""")
_CATALOG_USE = re.compile(r"\b(?:implementation|api|compileOnly|runtimeOnly|testImplementation|testCompileOnly|"
                          r"testRuntimeOnly)\s*\(?\s*libs\.([\w.]+)")
_BUILD_FILES = ("pom.xml", "build.gradle", "build.gradle.kts", "libs.versions.toml")


def _catalog(path: Path) -> dict[str, tuple[str, str, str, str]]:
    """gradle/libs.versions.toml: alias (as `libs.<alias>` spells it, `-` and `_` as `.`) -> coordinates."""
    try:
        if path.is_symlink() or path.stat().st_size > _MAX_BYTES:
            return {}
        data = tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    versions = data.get("versions") if isinstance(data.get("versions"), dict) else {}
    libraries = data.get("libraries") if isinstance(data.get("libraries"), dict) else {}
    out = {}
    for alias, spec in libraries.items():
        if isinstance(spec, str):
            parts = spec.split(":")
            group, artifact, version = (parts + ["", "", ""])[:3]
        elif isinstance(spec, dict):
            module = spec.get("module") or f"{spec.get('group', '')}:{spec.get('name', '')}"
            group, _, artifact = str(module).partition(":")
            version = spec.get("version", "")
            if isinstance(version, dict):
                version = versions.get(version.get("ref", ""), "") if "ref" in version else version.get("strictly", "")
        else:
            continue
        out[alias.replace("-", ".").replace("_", ".")] = (str(group), str(artifact), str(version), "")
    return out


def _gradle(files: list[Path], catalogs: list[Path]) -> list[tuple[str, str, str, str]]:
    """(group, artifact, version, classifier) the Gradle build files declare with a version."""
    aliases = {alias: coordinates for path in catalogs for alias, coordinates in _catalog(path).items()}
    out = []
    for path in files:
        try:
            if path.is_symlink() or path.stat().st_size > _MAX_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += [(g, a, v, c or "") for g, a, v, c in _GRADLE.findall(text)]
        out += [aliases[alias] for alias in _CATALOG_USE.findall(text) if alias in aliases]
    return out


def _gradle_home() -> Path:
    return Path(os.environ.get("GRADLE_USER_HOME") or Path.home() / ".gradle")


def _jar(group: str, artifact: str, version: str, classifier: str) -> Path | None:
    """The jar in the local Maven repository, else in Gradle's module cache (a folder per digest)."""
    name = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"
    maven = local_repository().joinpath(*group.split("."), artifact, version, name)
    if maven.is_file():
        return maven
    cached = _gradle_home() / "caches" / "modules-2" / "files-2.1" / group / artifact / version
    try:
        return next((d / name for d in sorted(cached.iterdir()) if (d / name).is_file()), None)
    except OSError:
        return None


def declared_jars(root: Path) -> list[Path]:
    """The jars of the dependencies the repository's build files declare (see the module's
    docstring), each once, those the local repositories do not hold left out."""
    found: dict[str, list[Path]] = {name: [] for name in _BUILD_FILES}
    seen = 0
    for folder, dirs, files in os.walk(root):  # links are not followed
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("target", "build", "node_modules", "src"))
        for name in _BUILD_FILES:
            if name in files:
                found[name].append(Path(folder) / name)
                seen += 1
        if seen >= _MAX_BUILD_FILES:
            break
    declared = _maven(found["pom.xml"]) + _gradle(found["build.gradle"] + found["build.gradle.kts"],
                                                  found["libs.versions.toml"])
    jars: list[Path] = []
    for group, artifact, version, classifier in declared:
        if not all(_COORDINATE.fullmatch(part) for part in (group, artifact, version)) or \
                (classifier and not _COORDINATE.fullmatch(classifier)):
            continue  # unresolved, or not a coordinate (a path): never a file outside the repositories' folders
        jar = _jar(group, artifact, version, classifier)
        if jar is not None and jar not in jars:
            jars.append(jar)
    return jars
