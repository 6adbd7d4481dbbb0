// Validates a FHIR R4 document Bundle (JSON on stdin) with independent
// implementations: npm `fhir` (structure, errorOnUnexpected) and `fhirpath`
// (the Bundle and Composition invariants the document rules rest on).
// Prints {"valid":bool,"messages":[...],"invariants":{...}}; exits 1 when
// anything fails.
import { Fhir } from 'fhir';
import fhirpath from 'fhirpath';
import r4 from 'fhirpath/fhir-context/r4/index.js';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const bundle = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const result = new Fhir().validate(bundle, { errorOnUnexpected: true });
const messages = (result.messages || []).filter((m) => m.severity === 'error');

// The invariants, as FHIR R4 states them (bdl-*) or as the rule reads
// applied to every section (cmp-1), plus the document rule that every
// reference of a section resolves to an entry of the bundle.
const invariants = {
  'bdl-7': "(type = 'history') or entry.where(fullUrl.exists()).select(fullUrl & resource.meta.versionId).isDistinct()",
  'bdl-9': "type = 'document' implies (identifier.system.exists() and identifier.value.exists())",
  'bdl-10': "type = 'document' implies (timestamp.hasValue())",
  'bdl-11': "type = 'document' implies entry.first().resource.is(Composition)",
  'cmp-1': 'entry.first().resource.repeat(section).all(text.exists() or entry.exists() or section.exists())',
  'section-references-resolve':
    'entry.first().resource.repeat(section).entry.reference.all(%bundle.entry.fullUrl contains $this)',
};
const outcome = {};
let ok = result.valid && messages.length === 0;

// FHIR primitives may not be empty: a string value needs non-whitespace
// content (the regex of the string type, and ele-1). The validator above
// lets "" through, so check it here.
const empty = [];
(function walk(v, path) {
  if (typeof v === 'string' && v.trim() === '') empty.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
})(bundle, 'Bundle');
outcome['no-empty-values'] = empty.length === 0;
ok = ok && outcome['no-empty-values'];
if (empty.length) messages.push({ severity: 'error', message: `empty values at ${empty.join(', ')}` });
for (const [name, expr] of Object.entries(invariants)) {
  const value = fhirpath.evaluate(bundle, expr, { bundle }, r4);
  outcome[name] = value.length === 1 && value[0] === true;
  ok = ok && outcome[name];
}
process.stdout.write(JSON.stringify({ valid: ok, messages, invariants: outcome }) + '\n');
process.exit(ok ? 0 : 1);
