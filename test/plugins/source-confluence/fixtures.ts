/**
 * A realistic Confluence space in storage format: three levels of pages under the home page,
 * code macros with languages and CDATA, panels, tables, links between pages, a task list,
 * navigation macros, and enough pages to need several pages of listing results.
 */
export interface FixturePage {
  id: string;
  title: string;
  parentId: string | null;
  version: number;
  body: string;
}

export interface FixtureSpace {
  id: string;
  key: string;
  name: string;
  homepageId: string;
  pages: FixturePage[];
}

const code = (language: string, body: string, title?: string) =>
  `<ac:structured-macro ac:name="code" ac:schema-version="1" ac:macro-id="${language}-m">` +
  (title ? `<ac:parameter ac:name="title">${title}</ac:parameter>` : '') +
  `<ac:parameter ac:name="language">${language}</ac:parameter><ac:parameter ac:name="linenumbers">true</ac:parameter>` +
  `<ac:plain-text-body><![CDATA[${body}]]></ac:plain-text-body></ac:structured-macro>`;

const panel = (name: string, inner: string, title?: string) =>
  `<ac:structured-macro ac:name="${name}" ac:schema-version="1">` +
  (title ? `<ac:parameter ac:name="title">${title}</ac:parameter>` : '') +
  `<ac:rich-text-body>${inner}</ac:rich-text-body></ac:structured-macro>`;

const link = (title: string, text?: string, anchor?: string) =>
  `<ac:link${anchor ? ` ac:anchor="${anchor}"` : ''}><ri:page ri:content-title="${title}" />` +
  (text ? `<ac:plain-text-link-body><![CDATA[${text}]]></ac:plain-text-link-body>` : '') +
  `</ac:link>`;

export function makeSpace(): FixtureSpace {
  const pages: FixturePage[] = [
    {
      id: '100',
      title: 'Engineering Home',
      parentId: null,
      version: 3,
      body:
        '<p>Welcome to the <strong>Engineering</strong> space of the Quasar platform.</p>' +
        '<ac:structured-macro ac:name="children" ac:schema-version="2"><ac:parameter ac:name="all">true</ac:parameter></ac:structured-macro>',
    },
    {
      id: '101',
      title: 'Getting Started',
      parentId: '100',
      version: 2,
      body: `<p>Start here to run Quasar locally. Read ${link('Installation')} first, then ${link('Configuration', 'tune the settings')}.</p>`,
    },
    {
      id: '102',
      title: 'Installation',
      parentId: '101',
      version: 5,
      body:
        '<ac:structured-macro ac:name="toc" ac:schema-version="1"><ac:parameter ac:name="maxLevel">2</ac:parameter></ac:structured-macro>' +
        '<h1>Prerequisites</h1><p>Quasar needs JDK&nbsp;17 and the <code>quasarctl</code> command line tool.</p>' +
        panel('info', '<p>The installer verifies the checksum of every quasarctl download.</p>') +
        '<h2>Install the CLI</h2><p>Download and unpack quasarctl with curl:</p>' +
        code('bash', 'curl -fsSL https://get.quasar.example/install.sh | sh\nquasarctl version --json > version.json') +
        `<p>Then continue with ${link('Configuration', 'the configuration guide', 'ports')}.</p>`,
    },
    {
      id: '103',
      title: 'Docker Setup',
      parentId: '102',
      version: 1,
      body:
        '<h1>Compose file</h1><p>Run the quasar broker and its database with docker compose.</p>' +
        code('yml', 'services:\n  broker:\n    image: quasar/broker:4.2\n    ports: ["7800:7800"]\n  db:\n    image: postgres:16', 'docker-compose.yml') +
        panel('warning', '<p>Never expose port 7800 of the broker to the internet without TLS.</p>', 'Exposed ports') +
        '<p>A CDATA edge case: the marker ' +
        code('xml', '<config><![CDATA[raw]]]]><![CDATA[></config>') +
        '</p>',
    },
    {
      id: '104',
      title: 'Configuration',
      parentId: '101',
      version: 4,
      body:
        '<p>Quasar reads <code>quasar.json</code> at start-up.</p>' +
        '<h1 id="ports">Settings</h1>' +
        '<table data-layout="default"><colgroup><col style="width: 200px;" /><col style="width: 400px;" /></colgroup><tbody>' +
        '<tr><th><p><strong>Setting</strong></p></th><th><p>Meaning</p></th><th><p>Default</p></th></tr>' +
        '<tr><td><p><code>broker.port</code></p></td><td><p>TCP port of the broker</p></td><td><p>7800</p></td></tr>' +
        '<tr><td><p><code>broker.retentionHours</code></p></td><td><p>How long messages are kept</p><p>per topic | partition</p></td><td><p>72</p></td></tr>' +
        '</tbody></table>' +
        code('json', '{\n  "broker": { "port": 7800, "retentionHours": 72 }\n}') +
        `<p>See ${link('Installation', 'installing quasarctl')} and ${link('Security Policies', 'the security policies', undefined).replace('<ri:page ', '<ri:page ri:space-key="SEC" ')}.</p>`,
    },
    {
      id: '105',
      title: 'API Guide',
      parentId: '100',
      version: 1,
      body: '<p>The Quasar REST API: authentication, pagination and errors.</p>',
    },
    {
      id: '106',
      title: 'Authentication',
      parentId: '105',
      version: 7,
      body:
        '<h1>Bearer tokens</h1><p>Every request to the Quasar API carries a bearer token in the Authorization header.</p>' +
        code('java', 'HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/topics"))\n    .header("Authorization", "Bearer " + token)\n    .build();\nif (retries < 3 && response.statusCode() >= 500) { retry(); }', 'QuasarClient.java') +
        panel('note', '<p>Tokens expire after 24&nbsp;hours; refresh them with <code>quasarctl token refresh</code>.</p>') +
        panel('tip', '<p>Store tokens in the OS keychain.</p>') +
        '<ac:structured-macro ac:name="expand" ac:schema-version="1"><ac:parameter ac:name="title">Token scopes</ac:parameter><ac:rich-text-body>' +
        '<ul><li><p><code>topics:read</code> lists topics</p></li><li><p><code>topics:write</code> publishes messages</p></li></ul>' +
        '</ac:rich-text-body></ac:structured-macro>',
    },
    {
      id: '107',
      title: 'Pagination',
      parentId: '105',
      version: 2,
      body:
        '<ac:structured-macro ac:name="toc" ac:schema-version="1" />' +
        '<p>List endpoints return a <em>cursor</em>; pass it back to get the next page.</p>' +
        code('py', 'cursor = None\nwhile True:\n    page = client.list_topics(cursor=cursor)\n    cursor = page.next_cursor\n    if not cursor:\n        break') +
        '<h2>Checklist</h2><ac:task-list>' +
        '<ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>Handle an empty last page</ac:task-body></ac:task>' +
        '<ac:task><ac:task-id>2</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>Retry on HTTP 429</ac:task-body></ac:task>' +
        '</ac:task-list>',
    },
    {
      id: '114',
      title: 'Release Notes',
      parentId: '100',
      version: 1,
      body: '<p>What changed in each Quasar release.</p><ac:structured-macro ac:name="children" ac:schema-version="2" />',
    },
  ];
  for (let i = 0; i < 6; i++) {
    pages.push({
      id: String(108 + i),
      title: `Release 4.${i}`,
      parentId: '114',
      version: 1,
      body: `<p>Quasar 4.${i} ships fix number ${i} for the broker and the <ac:structured-macro ac:name="status"><ac:parameter ac:name="title">STABLE</ac:parameter><ac:parameter ac:name="colour">Green</ac:parameter></ac:structured-macro> channel.</p>`,
    });
  }
  return { id: '98304', key: 'ENG', name: 'Engineering', homepageId: '100', pages };
}
