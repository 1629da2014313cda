import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import type { StorageConfigRecord } from '../../store/storage-config-repository.js';
import { time } from './format.js';
import { alert, badge, csrfField, emptyState, flashBanner, page, pageHeading, postButton, type Assets } from './layout.js';

export interface StorageForm {
  name: string;
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  isDefault: boolean;
}

export const emptyStorageForm = (): StorageForm => ({
  name: '',
  endpoint: '',
  bucket: '',
  region: 'us-east-1',
  accessKeyId: '',
  secretAccessKey: '',
  forcePathStyle: true,
  isDefault: false,
});

export interface StorageListView {
  ctx: DashboardContext;
  assets: Assets;
  configs: StorageConfigRecord[];
  encryptionConfigured: boolean;
}

const encryptionWarning = () =>
  alert(
    'warning',
    html`The server has no <code>STORAGE_ENCRYPTION_KEY</code>, which encrypts the secret access keys at rest. Ask your operator to set it
      (32 random bytes, e.g. <code>openssl rand -base64 32</code>) and restart; until then configurations cannot be saved or tested.`,
    'Storage is not set up on this server.',
  );

function configCard(ctx: DashboardContext, config: StorageConfigRecord): SafeHtml {
  const flash = ctx.flash?.about === config.id ? ctx.flash : undefined;
  const base = `${DASHBOARD_PATH}/storage/${config.id}`;
  return html`<article class="card storage-card ${config.isDefault ? 'is-default' : ''}" data-config-id="${config.id}" aria-labelledby="config-${config.id}">
    <div class="storage-card-header">
      <h3 id="config-${config.id}">${config.name}</h3>
      ${config.isDefault ? badge('accent', 'Default') : ''}
    </div>
    <dl class="details">
      <div><dt>Endpoint</dt><dd class="mono">${config.endpoint}</dd></div>
      <div><dt>Bucket</dt><dd class="mono">${config.bucket}</dd></div>
      <div><dt>Region</dt><dd class="mono">${config.region}</dd></div>
      <div><dt>Access key ID</dt><dd class="mono">${config.accessKeyId}</dd></div>
      <div><dt>Secret</dt><dd><span class="muted">Stored encrypted, never shown</span></dd></div>
      <div><dt>Added</dt><dd>${time(config.createdAt.getTime(), 'date')}</dd></div>
    </dl>
    <div class="test-result" aria-live="polite">${flash ? alert(flash.kind, flash.message) : ''}</div>
    <div class="button-row">
      ${postButton(ctx, `${base}/test`, 'Test connection', 'button button-small')}
      ${config.isDefault ? '' : postButton(ctx, `${base}/default`, 'Make default', 'button button-small button-ghost')}
      <a class="button button-small button-ghost" href="${base}/edit">Edit</a>
      <a class="button button-small button-danger-ghost" href="${base}/delete" aria-label="Delete ${config.name}">Delete</a>
    </div>
  </article>`;
}

export function storageListPage(view: StorageListView): SafeHtml {
  const { ctx } = view;
  const hasDefault = view.configs.some((c) => c.isDefault);
  const body = html`${pageHeading(
    'Storage',
    html`S3-compatible buckets that receive a copy of every capture. The <strong>default</strong> configuration is used whenever a
      request does not bring its own <code>requestStorage*</code> settings; the response then names the file's address.`,
    view.encryptionConfigured ? html`<a class="button button-primary" href="${DASHBOARD_PATH}/storage/new">Add configuration</a>` : '',
  )}
  ${view.encryptionConfigured ? '' : encryptionWarning()}
  ${flashBanner(ctx.flash)}
  ${
    view.configs.length > 0 && !hasDefault
      ? alert(
          'warning',
          'None of the configurations is the default, so captures are not uploaded unless a request names its own storage. Pick one with “Make default”.',
        )
      : ''
  }
  ${
    view.configs.length === 0
      ? html`<section class="card">${emptyState(
          'No storage configured',
          'Captures are returned in the response only. Add an S3, R2, MinIO or other S3-compatible bucket to keep a copy of every capture.',
          view.encryptionConfigured
            ? html`<a class="button button-primary" href="${DASHBOARD_PATH}/storage/new">Add configuration</a>`
            : '',
        )}</section>`
      : html`<div class="card-grid">${view.configs.map((config) => configCard(ctx, config))}</div>`
  }`;
  return page({ title: 'Storage', body, assets: view.assets, ctx, section: 'storage' });
}

export interface StorageFormView {
  ctx: DashboardContext;
  assets: Assets;
  /** Undefined when creating. */
  existing?: StorageConfigRecord;
  form: StorageForm;
  error?: string;
  encryptionConfigured: boolean;
}

function textField(
  id: keyof StorageForm,
  label: string,
  value: string,
  options: { type?: string; placeholder?: string; help?: string; required?: boolean; autocomplete?: string; mono?: boolean } = {},
): SafeHtml {
  const helpId = `${id}-help`;
  return html`<div class="field">
    <label for="${id}">${label}${options.required === false ? html` <span class="optional">(optional)</span>` : ''}</label>
    <input id="${id}" name="${id}" type="${options.type ?? 'text'}" value="${value}" ${options.required === false ? '' : 'required'}
      ${options.placeholder ? html`placeholder="${options.placeholder}"` : ''} autocomplete="${options.autocomplete ?? 'off'}" spellcheck="false"
      ${options.mono ? html`class="mono"` : ''} ${options.help ? html`aria-describedby="${helpId}"` : ''}>
    ${options.help ? html`<p class="hint" id="${helpId}">${options.help}</p>` : ''}
  </div>`;
}

export function storageFormPage(view: StorageFormView): SafeHtml {
  const { ctx, form, existing } = view;
  const editing = Boolean(existing);
  const action = editing ? `${DASHBOARD_PATH}/storage/${existing!.id}` : `${DASHBOARD_PATH}/storage`;
  const title = editing ? `Edit “${existing!.name}”` : 'Add storage configuration';
  const body = html`${pageHeading(title, html`<a href="${DASHBOARD_PATH}/storage">← All storage configurations</a>`)}
  ${view.encryptionConfigured ? '' : encryptionWarning()}
  <section class="card form-card" aria-label="${title}">
    ${view.error ? alert('error', view.error, 'Not saved:') : ''}
    <form method="post" action="${action}" class="stack" novalidate>
      ${csrfField(ctx)}
      ${textField('name', 'Name', form.name, { placeholder: 'e.g. Production bucket', help: 'Unique within your organization.' })}
      ${textField('endpoint', 'Endpoint URL', form.endpoint, {
        type: 'url',
        placeholder: 'https://s3.eu-central-1.amazonaws.com',
        help: 'The S3 API address, e.g. https://<account>.r2.cloudflarestorage.com or your MinIO URL.',
        mono: true,
      })}
      <div class="field-row">
        ${textField('bucket', 'Bucket', form.bucket, { placeholder: 'my-captures', mono: true })}
        ${textField('region', 'Region', form.region, { placeholder: 'us-east-1', help: 'us-east-1 when your provider has none.', mono: true })}
      </div>
      ${textField('accessKeyId', 'Access key ID', form.accessKeyId, { mono: true })}
      ${textField('secretAccessKey', 'Secret access key', '', {
        type: 'password',
        autocomplete: 'new-password',
        required: !editing,
        mono: true,
        ...(editing
          ? {
              placeholder: '••••••••  (unchanged)',
              help: 'Leave blank to keep the current secret. It is stored encrypted and never shown again.',
            }
          : { help: 'Stored encrypted; it is never shown again, not even to you.' }),
      })}
      <div class="field field-check">
        <input id="forcePathStyle" name="forcePathStyle" type="checkbox" value="on" ${form.forcePathStyle ? 'checked' : ''}>
        <label for="forcePathStyle">Path-style URLs <span class="hint-inline">(<code>endpoint/bucket/key</code>; needed by MinIO and most S3-compatible servers)</span></label>
      </div>
      ${
        editing
          ? ''
          : html`<div class="field field-check">
            <input id="isDefault" name="isDefault" type="checkbox" value="on" ${form.isDefault ? 'checked' : ''}>
            <label for="isDefault">Make this the default configuration <span class="hint-inline">(your first one always is)</span></label>
          </div>`
      }
      <div class="form-actions">
        <button type="submit" class="button button-primary" ${view.encryptionConfigured ? '' : 'disabled'}>${editing ? 'Save changes' : 'Add configuration'}</button>
        <a class="button button-ghost" href="${DASHBOARD_PATH}/storage">Cancel</a>
      </div>
    </form>
  </section>`;
  return page({ title, body, assets: view.assets, ctx, section: 'storage' });
}

export function deleteStoragePage(ctx: DashboardContext, assets: Assets, config: StorageConfigRecord): SafeHtml {
  const body = html`${pageHeading('Delete storage configuration')}
  <section class="card confirm-card" aria-labelledby="delete-title">
    <h2 id="delete-title">Delete “${config.name}”?</h2>
    <p>Daguerre forgets the settings and the secret of <code>${config.bucket}</code> at <code>${config.endpoint}</code>.
      Files already uploaded stay in the bucket.</p>
    ${
      config.isDefault
        ? alert(
            'warning',
            'This is the default configuration: after deleting it, captures are no longer uploaded until you make another configuration the default.',
          )
        : ''
    }
    <div class="button-row">
      <form method="post" action="${DASHBOARD_PATH}/storage/${config.id}/delete" class="inline-form">
        ${csrfField(ctx)}
        <button type="submit" class="button button-danger">Delete configuration</button>
      </form>
      <a class="button" href="${DASHBOARD_PATH}/storage">Cancel</a>
    </div>
  </section>`;
  return page({ title: 'Delete storage configuration', body, assets, ctx, section: 'storage' });
}
