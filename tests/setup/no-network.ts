import nock from 'nock';

// Nothing leaves the machine: Anthropic and ChatWork are faked per test; loopback stays reachable.
nock.disableNetConnect();
nock.enableNetConnect(
  (host) => host.startsWith('127.0.0.1') || host.startsWith('localhost') || host.startsWith('[::1]'),
);
afterEach(() => nock.cleanAll());
// node:http is shared by the test files of one jest worker, while each file loads its own nock: the file's
// nock lets go of node:http when the file ends, so the next file's interceptors are the ones that answer.
afterAll(() => nock.restore());
