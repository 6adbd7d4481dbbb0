// What the FHIR validators of this folder (fhir.mjs, auditevent.mjs)
// share: the check for empty values, and evaluating
// invariants with fhirpath.
import fhirpath from 'fhirpath';
import r4 from 'fhirpath/fhir-context/r4/index.js';

// emptyValues returns the paths of the empty strings in bundle. FHIR
// primitives may not be empty: a string value needs non-whitespace content
// (the regex of the string type, and ele-1), which npm `fhir` lets through.
export function emptyValues(bundle) {
  const empty = [];
  (function walk(v, path) {
    if (typeof v === 'string' && v.trim() === '') empty.push(path);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
  })(bundle, 'Bundle');
  return empty;
}

// holds reports, for each named FHIRPath expression of invariants, whether
// it evaluates to exactly true on bundle, with the environment env.
export function holds(bundle, invariants, env) {
  const outcome = {};
  for (const [name, expr] of Object.entries(invariants)) {
    const value = fhirpath.evaluate(bundle, expr, env, r4);
    outcome[name] = value.length === 1 && value[0] === true;
  }
  return outcome;
}
