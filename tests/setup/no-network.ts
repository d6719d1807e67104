import nock from 'nock';

// Nothing leaves the machine: Anthropic and ChatWork are faked per test; loopback stays reachable.
nock.disableNetConnect();
nock.enableNetConnect(
  (host) => host.startsWith('127.0.0.1') || host.startsWith('localhost') || host.startsWith('[::1]'),
);
afterEach(() => nock.cleanAll());
