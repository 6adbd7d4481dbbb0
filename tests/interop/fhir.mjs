// Validates a FHIR R4 document Bundle (JSON on stdin) with independent
// implementations: npm `fhir` (structure, errorOnUnexpected) and `fhirpath`
// (the Bundle and Composition invariants the document rules rest on).
// Prints {"valid":bool,"messages":[...],"invariants":{...}}; exits 1 when
// anything fails.
import { Fhir } from 'fhir';
import { emptyValues, holds } from './fhircheck.mjs';
import { program } from './program.mjs';

export async function run(_args, input) {
  const bundle = JSON.parse(input.toString('utf8'));

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
  const empty = emptyValues(bundle);
  if (empty.length) messages.push({ severity: 'error', message: `empty values at ${empty.join(', ')}` });
  const outcome = { 'no-empty-values': empty.length === 0, ...holds(bundle, invariants, { bundle }) };
  const ok = result.valid && messages.length === 0 && Object.values(outcome).every(Boolean);
  return { stdout: JSON.stringify({ valid: ok, messages, invariants: outcome }) + '\n', code: ok ? 0 : 1 };
}

await program(import.meta.url, run);
